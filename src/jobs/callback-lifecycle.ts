import type { Services } from '../domain/services';
import type { ClaimedJob } from '../domain/jobs/job.repository';
import { LIFECYCLE_JOBS } from '../domain/voice/callback-lifecycle.service';
import { FinalJobError, type JobEngine } from './engine';

// The callback lifecycle's timers (docs/api.md, "The callback lifecycle"): each job is a
// decision of the lifecycle service, idempotent (it checks, under the account's lock, that
// what it acts on is still as the timer left it), durable across restarts and crashes.

/** How often the safety net looks for accounts where a free agent and a routable request could meet. */
const SWEEP_SECONDS = 15;

function accountOf(job: ClaimedJob): bigint {
  if (job.accountId === null) throw new FinalJobError(`${job.kind}: no account`);
  return job.accountId;
}

function idOf(job: ClaimedJob, field: string): bigint {
  const raw = job.payload[field];
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw new FinalJobError(`${job.kind}: no ${field}`);
  return BigInt(raw);
}

export function registerCallbackLifecycle(engine: JobEngine, services: Services): void {
  const lifecycle = services.callbackLifecycle;
  engine.handle(LIFECYCLE_JOBS.offerExpired, {
    run: (job) => lifecycle.expireOffer(accountOf(job), idOf(job, 'request_id'), Number(job.payload.offer_seq)),
  });
  engine.handle(LIFECYCLE_JOBS.retryDue, {
    run: async (job) => {
      await lifecycle.dispatch({ accountId: accountOf(job) });
    },
  });
  engine.handle(LIFECYCLE_JOBS.wrapUpEnded, {
    run: (job) => lifecycle.endWrapUp(accountOf(job), idOf(job, 'user_id'), Number(job.payload.wrap_up_seq)),
  });
  engine.handle(LIFECYCLE_JOBS.sweep, {
    everySeconds: SWEEP_SECONDS,
    run: async () => {
      for (const accountId of await services.callbackLifecycle.routableAccounts()) await lifecycle.dispatch({ accountId });
    },
  });
}
