import fp from 'fastify-plugin';
import type { Db } from '../../db/create-db';
import { migrationsApplied } from '../../db/migrate';
import type { JobQueueStats } from '../../domain/jobs/job.repository';
import type { RetentionRun } from '../../domain/retention/retention.service';

/** /readyz answers 503 when the database has not answered SELECT 1 within this time */
const READY_TIMEOUT_MS = 2_000;

interface HealthOptions {
  db: Db;
  /** the background engine's queue, read from the database (every process shows it) */
  jobs: () => Promise<JobQueueStats>;
  /** whether this process runs the engine (WORKER) */
  worker: boolean;
  /** the retention purge's last run, whatever process ran it (null before the first) */
  retention: () => Promise<RetentionRun | null>;
}

/** /readyz's view of the last purge (docs/api.md, "Retention"). */
function retentionView(run: RetentionRun | null) {
  if (!run) return null;
  return { last_run_at: run.startedAt.toISOString(), duration_ms: run.durationMs, removed: run.removed, next_run_at: run.nextRunAt?.toISOString() ?? null };
}

/**
 * GET /healthz (the process is up) and GET /readyz (the database answers and is migrated),
 * with the state of the background engine's queue: jobs pending, due, running, dead, and
 * how long the oldest due job has waited (docs/api.md, "Background jobs"), and the figures
 * of the last retention purge (docs/api.md, "Retention").
 */
export const health = fp<HealthOptions>(async (fastify, { db, jobs, worker, retention }) => {
  fastify.get('/healthz', async () => ({ status: 'ok' }));
  let migrated = false;
  fastify.get('/readyz', async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      // a database that accepts connections but does not answer is not ready either
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('readiness check timed out')), READY_TIMEOUT_MS);
      });
      await Promise.race([db.sql('SELECT 1'), timeout]);
      migrated ||= await migrationsApplied(db);
      if (migrated) {
        const [queue, purge] = await Promise.race([Promise.all([jobs(), retention()]), timeout]);
        return {
          status: 'ready',
          jobs: { worker, pending: queue.pending, due: queue.due, running: queue.running, oldest_due_seconds: Math.round(queue.oldestDueSeconds), dead: queue.dead },
          retention: retentionView(purge),
          // only with READ_REPLICA_URL: whether each takes reads now, and how far behind it is at most
          ...(db.replicaStates ? { replicas: db.replicaStates().map((r) => ({ name: r.name, usable: r.usable, lag_ms: r.lagMs })) } : {}),
        };
      }
      return reply.code(503).send({ status: 'unavailable', reason: 'migrations pending' });
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    } finally {
      clearTimeout(timer);
    }
  });
}, { name: 'health' });
