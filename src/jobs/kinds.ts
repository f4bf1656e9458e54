import type { Db } from '../db/create-db';
import type { Services } from '../domain/services';
import { JobEngine, type JobEngineOptions } from './engine';

/**
 * The engine of a process, with every kind of job the service runs registered: the one
 * place that knows them (npm start's engine and the worker-only process alike).
 */
export function createJobEngine(db: Pick<Db, 'listen'>, services: Services, options: JobEngineOptions = {}): JobEngine {
  const engine = new JobEngine(db, services.jobs, options);
  // the kinds come with the features that need them (webhook deliveries, timers, retention)
  return engine;
}
