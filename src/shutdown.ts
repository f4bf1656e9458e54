import type pino from 'pino';

/** How long a shutdown may take before the process gives up and exits 1. */
export const SHUTDOWN_GRACE_MS = 10_000;

type Stop = (signal: NodeJS.Signals) => void;

/**
 * SIGTERM and SIGINT, handled from the process's first step. Until Node has a listener, a
 * signal kills the process outright (no exit code, nothing closed), so the listeners go in
 * before anything is started or logged: a supervisor that reads "listening on" or
 * "worker started" and at once sends SIGTERM (a rolling restart, a test) must get a
 * graceful stop, however the process was scheduled between that line and the next.
 *
 * A signal that arrives while the process is starting is remembered, and the stop runs as
 * soon as `started()` hands it over: migrations and listening finish first (they are short,
 * and cutting them in the middle leaves nothing cleaner). If starting then takes longer
 * than the grace period, the process exits 1.
 */
export function handleShutdownSignals(log: pino.Logger): { started(stop: Stop): void } {
  let stop: Stop | undefined;
  let pending: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop) return stop(signal);
    if (pending) return;
    pending = signal;
    log.info({ signal }, 'signal received while starting: stopping as soon as started');
    setTimeout(() => {
      log.error('start-up did not finish within the shutdown grace period; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => onSignal(signal));
  return {
    started(handler) {
      stop = handler;
      if (pending) handler(pending);
    },
  };
}
