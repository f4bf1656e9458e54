import type pino from 'pino';

/** How long a shutdown may take before the process gives up and exits 1. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** What a process does to stop once signalled: resolves when it is done, rejects when it could not finish cleanly. */
interface Stop {
  /** the log line's words after "shutting down: " */
  what: string;
  run(): Promise<void>;
  /** the grace period of this stop (the cluster primary leaves its workers their own first) */
  graceMs?: number;
}

/**
 * SIGTERM and SIGINT, handled from the process's first step, and the one shutdown of every
 * kind of process: the first signal logs "shutting down", runs the process's stop once,
 * then exits 0 — or 1 when the stop fails or the grace period runs out.
 *
 * Until Node has a listener, a signal kills the process outright (no exit code, nothing
 * closed), so the listeners go in before anything is started or logged: a supervisor that
 * reads "listening on" or "worker started" and at once sends SIGTERM (a rolling restart,
 * a test) must get a graceful stop, however the process was scheduled between that line
 * and the next.
 *
 * A signal that arrives while the process is starting is remembered, and the stop runs as
 * soon as `started()` hands it over: migrations and listening finish first (they are short,
 * and cutting them in the middle leaves nothing cleaner). The grace period counts from the
 * signal: a start-up still unfinished when it ends exits 1.
 */
export function handleShutdownSignals(log: pino.Logger): { started(stop: Stop): void } {
  let stop: Stop | undefined;
  let signalled: NodeJS.Signals | undefined;
  let timer: NodeJS.Timeout | undefined;
  const giveUpAfter = (ms: number, message: string) => {
    timer ??= setTimeout(() => {
      log.error(message);
      process.exit(1);
    }, ms).unref();
  };
  const run = async (signal: NodeJS.Signals, { what, run, graceMs = SHUTDOWN_GRACE_MS }: Stop) => {
    log.info({ signal }, `shutting down: ${what}`);
    giveUpAfter(graceMs, 'shutdown took too long; exiting');
    try {
      await run();
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = signal;
    if (stop) return void run(signal, stop);
    log.info({ signal }, 'signal received while starting: stopping as soon as started');
    giveUpAfter(SHUTDOWN_GRACE_MS, 'start-up did not finish within the shutdown grace period; exiting');
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => onSignal(signal));
  return {
    started(handler) {
      stop = handler;
      if (signalled) void run(signalled, handler);
    },
  };
}
