import type { Db } from '../db/create-db';
import type { Services } from '../domain/services';
import { JobEngine, type JobEngineOptions } from './engine';
import { registerWebhookDeliveries, type WebhookDeliveryOptions } from './webhook-deliveries';
import { registerCallbackLifecycle } from './callback-lifecycle';
import { registerRetention } from './retention';

export interface JobKindsOptions extends JobEngineOptions {
  /** webhook deliveries' settings (tests shorten the retry schedule) */
  webhooks?: WebhookDeliveryOptions;
}

/**
 * The engine of a process, with every kind of job the service runs registered: the one
 * place that knows them (npm start's engine and the worker-only process alike).
 */
export function createJobEngine(db: Pick<Db, 'listen'>, services: Services, options: JobKindsOptions = {}): JobEngine {
  const engine = new JobEngine(db, services.jobs, options);
  // the events' fan-out to webhooks, and the deliveries
  registerWebhookDeliveries(engine, services, options.webhooks);
  // the callback lifecycle's timers: offers expiring, retries coming due, wrap-ups ending
  registerCallbackLifecycle(engine, services);
  // the retention purge: what is over past its retention, removed in batches (docs/api.md, "Retention")
  registerRetention(engine, services, options.log);
  return engine;
}
