import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config';
import type { Db } from './db/create-db';
import type { Services } from './domain/services';
import { buildGraphQLSchema } from './graphql/schema';
import { createContextBuilder } from './http/request-context';
import { internalError, notFound } from './http/error-envelope';
import { benchStats } from './http/plugins/bench';
import { BODY_LIMIT, errorEnvelope, sendError } from './http/plugins/errors';
import websocket from '@fastify/websocket';
import { handleProtocols } from 'graphql-ws';
import { graphql } from './http/plugins/graphql';
import { subscriptionsHandler } from './http/plugins/subscriptions';
import { EventFeed } from './domain/events/event-feed';
import type { SubscriptionLimits } from './domain/events/subscription-limits';
import { graphiql } from './http/plugins/graphiql';
import { health } from './http/plugins/health';
import { jsonBody } from './http/plugins/json-body';
import { metrics, metricsAccess } from './http/plugins/metrics';
import { corsForOrigins } from './http/plugins/cors';
import { AppMetrics, type RetentionSource } from './http/app-metrics';
import { apiDocs, openapi, type OpenApiDocument } from './http/plugins/openapi';
import { openapiConformance } from './http/plugins/openapi-conformance';
import { oauthServer } from './http/plugins/oauth-server';
import { oauthPages } from './http/plugins/oauth-pages';
import { requestLog } from './http/plugins/request-log';
import { rest } from './http/plugins/rest';
import { voiceQueue } from './http/plugins/voice-queue';
import { restRoutes } from './rest/routes';
import { PROJECT_ROOT } from './project-root';

const API_VERSION = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export interface AppDeps {
  db: Db;
  /** the composition root's services over the same database (createServices) */
  services: Services;
  config: Pick<Config, 'hashKey' | 'publicUrl' | 'graphqlIntrospection' | 'logLevel'> &
    Partial<Pick<Config, 'benchMode' | 'openapiConformance' | 'graphqlExecutor' | 'trustProxy' | 'worker' | 'env' | 'metricsToken' | 'corsOrigins'>>;
  /** limits of live subscriptions (docs/api.md, "Live events"); tests lower them */
  subscriptionLimits?: Partial<SubscriptionLimits>;
  /** pino options or false; tests pass a stream to capture logs */
  logger?: FastifyServerOptions['logger'];
  /** the purge's last run, shown by /metrics (docs/api.md, "Metrics") */
  retention?: RetentionSource;
}

export interface App {
  fastify: FastifyInstance;
  services: Services;
  /** the live fan-out of events to subscriptions */
  eventFeed: EventFeed;
  /** what /metrics shows; undefined when it is off (production without METRICS_TOKEN). createJobEngine counts there too */
  metrics?: AppMetrics;
}

/** Builds the HTTP application over a database, from its plugins; never listens (main.ts does). */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { db, services, config } = deps;
  const fastify = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    bodyLimit: BODY_LIMIT,
    // the request-log plugin writes the one line per request
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 200 },
    // request.ip (login limits, KDF queue, audit log) is X-Forwarded-For's client only
    // when the peer is one of these proxies; otherwise the peer's own address
    trustProxy: config.trustProxy ?? false,
    // The router refuses a path with malformed percent-encoding or an over-long
    // segment before any route runs; only a path parameter (an id) can be either,
    // and an id that is not a positive integer is a 404 in the envelope (docs/api.md, "Errors").
    frameworkErrors: (error, _request, reply) =>
      sendError(reply, error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? notFound() : internalError()),
  });
  const buildContext = createContextBuilder(services, config.publicUrl);
  const schema = buildGraphQLSchema();
  const executor = config.graphqlExecutor ?? 'compiled';

  await fastify.register(jsonBody);
  await fastify.register(requestLog);
  await fastify.register(errorEnvelope);
  // tests only: every answer checked against the OpenAPI document
  if (config.openapiConformance) {
    await fastify.register(openapiConformance, { mode: config.openapiConformance, document: () => fastify.swagger() as unknown as OpenApiDocument });
  }
  await fastify.register(health, { db, jobs: () => services.jobs.stats(), worker: config.worker ?? false, retention: () => services.retention.lastRun() });
  // GET /metrics, and the hook that measures every route registered after it
  const access = metricsAccess(config);
  const measured = access.kind === 'off'
    ? undefined
    : new AppMetrics({ pool: db.poolStats?.bind(db), replicas: db.replicaStates?.bind(db), jobs: () => services.jobs.stats(), retention: deps.retention ?? services.retention, log: fastify.log });
  await fastify.register(metrics, { access, metrics: measured });
  // CORS for the listed browser origins on the APIs (CORS_ORIGINS); none listed, no CORS header anywhere
  if (config.corsOrigins?.length) await fastify.register(corsForOrigins, { origins: config.corsOrigins });
  // bench instrumentation exists only in bench mode: nothing of it runs otherwise
  if (config.benchMode) await fastify.register(benchStats, { db });
  // live events: the process's one LISTEN, from its first subscriber on
  const listener = randomUUID();
  const feed = new EventFeed({
    listen: (channel, onNotify) => db.listen(channel, onNotify),
    listeners: {
      hold: (accountId) => services.liveListeners.hold({ accountId }, listener),
      release: (accountId) => services.liveListeners.release({ accountId }, listener),
    },
    read: (id) => services.eventLog.findPublished(id),
    onError: (err) => fastify.log.error({ err }, 'event feed: an event could not be read'),
  });
  fastify.addHook('onClose', () => feed.stop());
  // WebSocket upgrades of the routes registered after it: GET /graphql's (graphql-ws subscriptions)
  await fastify.register(websocket, { options: { maxPayload: BODY_LIMIT, handleProtocols: (protocols) => handleProtocols(protocols) } });
  const subscriptions = (limits: Parameters<typeof subscriptionsHandler>[0]['limits']) =>
    subscriptionsHandler({ schema, buildContext, services, feed, limits, log: fastify.log, subscriptionLimits: deps.subscriptionLimits });
  await fastify.register(graphql, { schema, buildContext, introspection: config.graphqlIntrospection, executor, subscriptions });
  // the offline GraphQL explorer, gated like the Sandbox page: without introspection it has no schema to show
  if (config.graphqlIntrospection) await fastify.register(graphiql);
  // the live queue page: public HTML whose script reads /graphql with the token a person gives it
  await fastify.register(voiceQueue);
  // the OpenAPI document collects the routes registered after it
  await fastify.register(openapi, { version: API_VERSION });
  await fastify.register(rest, { schema, buildContext, routes: restRoutes, executor });
  // encapsulated: its form-body parser and RFC 6749 errors stay on its own routes
  await fastify.register(oauthServer, { services, publicUrl: config.publicUrl });
  // encapsulated too: the pages' (login, consent, sign-out, authorized apps) form parser and cookies stay on their routes
  await fastify.register(oauthPages, { services, hashKey: config.hashKey, publicUrl: config.publicUrl });
  // GET /api/v2/openapi.json and Swagger UI at /api/docs, without authentication
  await fastify.register(apiDocs);
  return { fastify, services, eventFeed: feed, metrics: measured };
}
