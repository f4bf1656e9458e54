import type { Services } from '../domain/services';
import { RETENTION_JOB } from '../domain/retention/retention-settings';
import type { JobEngine, JobEngineOptions } from './engine';

// The retention purge as a recurring job (docs/api.md, "Retention"): one row (kind
// retention.purge, key 'recurring'), so one runner at a time across processes, due again
// RETENTION_INTERVAL_SECONDS after each run. A purge of a large backlog outlasts the
// 60 s lease: the engine renews it while the purge runs (heartbeat). SIGTERM fires the
// signal: the purge stops after its current batch, the job is given back, and the next
// process to claim it goes on from there (the rules are stateless).

export function registerRetention(engine: JobEngine, services: Services, log?: JobEngineOptions['log']): void {
  const retention = services.retention;
  engine.handle(RETENTION_JOB, {
    everySeconds: retention.intervalSeconds,
    heartbeat: true,
    run: async (_job, signal) => {
      const report = await retention.run({ signal });
      const total = Object.values(report.removed).reduce((a, b) => a + b, 0);
      log?.info({ removed: report.removed, total, durationMs: Math.round(report.durationMs), stopped: report.stopped }, 'retention: purge run');
      // given back to the queue (due at once) rather than rescheduled a whole interval later
      if (report.stopped) throw new Error('retention: stopped before the end');
    },
  });
}
