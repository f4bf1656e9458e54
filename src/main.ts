import 'reflect-metadata';
import cluster from 'node:cluster';
import pino from 'pino';
import { loadConfig, ConfigError, databaseConnection, type Config } from './config';
import { createDb, type Db } from './db/create-db';
import { applyMigrations } from './db/schema-engine';
import { DatabaseInUseError } from './db/dir-lock';
import { bootstrapAdmin } from './domain/directory/bootstrap';
import { printFirstAdminPassword } from './first-admin';
import { servicesFor, type Services } from './domain/services';
import { buildApp } from './app';
import { createJobEngine } from './jobs/kinds';
import { loggerOptions } from './logger';
import { handleShutdownSignals, SHUTDOWN_GRACE_MS } from './shutdown';

type Signals = ReturnType<typeof handleShutdownSignals>;

/** Migrations and the first admin, under the migration lock (once across concurrent starters). */
async function prepareDatabase(db: Db, services: Services, config: Config, log: pino.Logger): Promise<void> {
  const applied = await db.withMigrationLock(async () => {
    const names = await applyMigrations(db.migrationFactory());
    const boot = await bootstrapAdmin(services, { email: config.adminEmail, password: config.adminPassword });
    if (boot.created) {
      if (boot.generatedPassword) {
        // on stderr whatever the log level, and never in the log (src/first-admin.ts)
        printFirstAdminPassword(boot.email!, boot.generatedPassword);
        log.warn(`created account "default" with admin ${boot.email}; its generated password is printed on stderr, once (not in this log)`);
      } else {
        log.info(`created account "default" with admin ${boot.email} (password from ADMIN_PASSWORD)`);
      }
    }
    return names;
  });
  if (applied.length) log.info({ migrations: applied }, 'applied migrations');
}

async function runServer(config: Config, log: pino.Logger, signals: Signals, prepare: boolean): Promise<void> {
  const db = await createDb({ ...databaseConnection(config), poolSize: config.dbPoolSize, countStatements: config.benchMode, log });
  const services = servicesFor(db, config);
  if (prepare) await prepareDatabase(db, services, config, log);
  const { fastify, metrics } = await buildApp({ db, services, config, logger: loggerOptions(config.logLevel) });
  let stopping = false;
  // Responses sent while shutting down close their keep-alive connection: fastify.close()
  // waits for every connection, and one left idle would hold it until keepAliveTimeout.
  // (callback style: every response passes here, and needs no promise for a flag check)
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (stopping) reply.header('connection', 'close');
    done(null, payload);
  });
  await fastify.listen({ port: config.port, host: config.host });
  log.info(`listening on http://${config.host}:${config.port} (GraphQL: /graphql, REST: /api/v2, database: ${db.kind})`);
  // the background engine (WORKER, on by default; off in a web-only process)
  // (its webhook attempts and processed jobs are counted in /metrics)
  const engine = config.worker ? createJobEngine(db, services, { log, concurrency: config.jobConcurrency, metrics }) : undefined;
  await engine?.start();

  signals.started({
    what: 'finishing in-flight requests',
    async run() {
      stopping = true;
      // no new requests, then no new jobs: the ones running finish (or go back to the queue)
      await fastify.close();
      await engine?.stop();
      await db.close();
    },
  });
}

/** `npm run worker`: the background engine alone, no HTTP (beside web-only processes started with --no-worker). */
async function runWorker(config: Config, log: pino.Logger, signals: Signals): Promise<void> {
  const db = await createDb({ ...databaseConnection(config, { replicas: false }), poolSize: config.dbPoolSize, log });
  const services = servicesFor(db, config);
  await prepareDatabase(db, services, config, log);
  const engine = createJobEngine(db, services, { log, concurrency: config.jobConcurrency });
  await engine.start();
  log.info(`worker started: running background jobs, no HTTP (database: ${db.kind})`);
  signals.started({
    what: 'finishing the jobs that run',
    async run() {
      await engine.stop();
      await db.close();
    },
  });
}

async function runPrimary(config: Config, log: pino.Logger, signals: Signals): Promise<void> {
  // Migrate once here, then fork workers that share the port.
  const db = await createDb({ ...databaseConnection(config, { replicas: false }), poolSize: 2, log });
  await prepareDatabase(db, servicesFor(db, config), config, log);
  await db.close();
  // set by the stop: the workers' exits then count towards it, and none is replaced
  let drained: { resolve(): void; reject(err: Error): void } | undefined;
  // a worker that could not drain in time (exit 1) makes the whole shutdown a failure
  let drainFailed = false;
  const fork = () => cluster.fork();
  for (let i = 0; i < config.webConcurrency; i++) fork();
  cluster.on('exit', (worker, code) => {
    if (drained) {
      if (code !== 0) drainFailed = true;
      if (Object.keys(cluster.workers ?? {}).length > 0) return;
      if (drainFailed) drained.reject(new Error('a web process did not stop cleanly'));
      else drained.resolve();
      return;
    }
    log.error({ pid: worker.process.pid, code }, 'worker died; starting another');
    fork();
  });
  signals.started({
    what: 'stopping the web processes',
    // each worker has its own grace period: theirs end first
    graceMs: SHUTDOWN_GRACE_MS + 1000,
    run: () =>
      new Promise<void>((resolve, reject) => {
        drained = { resolve, reject };
        for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
      }),
  });
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  // `npm start -- --no-worker`: a web-only process (the jobs run in other processes)
  if (process.argv.includes('--no-worker')) config = { ...config, worker: false };
  const workerOnly = process.argv.includes('--worker-only');
  if (workerOnly && !config.databaseUrl) {
    // the embedded database is one process's: a separate worker would lock the web process out of it
    console.error('npm run worker needs DATABASE_URL (a PostgreSQL server): with the embedded database, npm start runs the jobs itself');
    process.exit(2);
  }
  const log = pino(loggerOptions(config.logLevel));
  // An uncaught exception or unhandled rejection still ends the process (Node's default: its
  // state is unknown, and a bug must not be hidden); this only says so in the log, as JSON
  // with the error, where Node would print a bare stack to stderr.
  process.on('uncaughtExceptionMonitor', (err, origin) => log.fatal({ err, origin }, `the process dies: ${origin === 'unhandledRejection' ? 'a promise rejected with no handler' : 'an uncaught exception'}`));
  // before anything starts or is logged (src/shutdown.ts)
  const signals = handleShutdownSignals(log);
  if (cluster.isPrimary) for (const warning of config.warnings) log.warn(warning);
  try {
    if (workerOnly) await runWorker(config, log, signals);
    else if (config.webConcurrency > 1 && cluster.isPrimary) await runPrimary(config, log, signals);
    else await runServer(config, log, signals, cluster.isPrimary);
  } catch (err) {
    if (err instanceof DatabaseInUseError) {
      log.fatal(err.message);
      process.exit(3);
    }
    log.fatal({ err }, 'failed to start');
    process.exit(1);
  }
}

void main();
