import 'reflect-metadata';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { ApolloServer } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import type { Config } from './config';
import type { Db } from './db/create-db';
import { migrationsApplied } from './db/migrate';
import { BadRequestError, DomainError, ServiceUnavailableError } from './domain/errors';
import { isDatabaseUnavailable } from './db/errors';
import { createServices, type Services } from './domain/services';
import { buildGraphQLSchema } from './graphql/schema';
import { contextError, createFormatError, responseHead } from './graphql/errors';
import { graphqlLimits } from './graphql/limits';
import type { GraphQLContext } from './graphql/context';
import { createContextBuilder } from './http/request-context';
import { registerRestRoutes } from './rest/adapter';
import { restRoutes } from './rest/routes';
import { badRequest, envelopeFor, internalError, notFound, type ErrorResponse } from './http/error-envelope';

export const BODY_LIMIT = 64 * 1024;
/** /readyz answers 503 when the database has not answered SELECT 1 within this time */
const READY_TIMEOUT_MS = 2_000;

export interface AppDeps {
  db: Db;
  config: Pick<Config, 'hashKey' | 'limits' | 'publicUrl' | 'graphqlIntrospection' | 'logLevel'> & Partial<Pick<Config, 'benchMode'>>;
  /** pino options or false; tests pass a stream to capture logs */
  logger?: FastifyServerOptions['logger'];
}

export interface App {
  fastify: FastifyInstance;
  services: Services;
}

function send(reply: import('fastify').FastifyReply, r: ErrorResponse) {
  if (r.headers) reply.headers(r.headers);
  return reply.code(r.status).type('application/json; charset=utf-8').send(r.body);
}

/** Builds the HTTP application over a database; never listens (main.ts does). */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { db, config } = deps;
  const fastify = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    bodyLimit: BODY_LIMIT,
    // our onResponse hook writes the one line per request
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 200 },
    // The router refuses a path with malformed percent-encoding or an over-long
    // segment before any route runs; only a path parameter (an id) can be either,
    // and an id that is not a positive integer is a 404 in the envelope (API.md §4).
    frameworkErrors: (error, _request, reply) =>
      send(reply, error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? notFound() : internalError()),
  });
  const services = createServices({ db, hashKey: config.hashKey, limits: config.limits });
  const buildContext = createContextBuilder(services, config.publicUrl);

  // JSON only; an empty body counts as no body (e.g. POST …/client_secret with a JSON content type).
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    // JSON is UTF-8 (RFC 8259 §8.1); decoding other bytes would store U+FFFD in their place.
    if (!isUtf8(body as Buffer)) return done(new BadRequestError('The request body is not valid UTF-8'), undefined);
    const text = (body as Buffer).toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    parseJson(req, text, done);
  });

  fastify.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // One line per request: method, path, status, time, request id. Never headers or bodies.
  fastify.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });

  fastify.setErrorHandler((error, request, reply) => {
    const mapped = envelopeFor(error);
    if (mapped) return send(reply, mapped);
    const e = error as { code?: string; statusCode?: number; message?: string };
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return send(reply, { status: 413, body: { error: 'PayloadTooLarge', description: `Request bodies are limited to ${BODY_LIMIT} bytes` } });
    }
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return send(reply, { status: 415, body: { error: 'UnsupportedMediaType', description: 'Request bodies must be application/json' } });
    }
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      const description = e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError ? 'The request body is not valid JSON' : 'The request is malformed';
      return send(reply, badRequest(description));
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, internalError());
  });
  fastify.setNotFoundHandler((request, reply) => send(reply, notFound()));

  fastify.get('/healthz', async () => ({ status: 'ok' }));
  if (config.benchMode) {
    // Only in bench mode (BENCH_MODE=true): statements and the requests received (these
    // stats requests excluded), so that requests the load generator gave up on when it
    // stopped (they still run their statements) count too.
    let requests = 0;
    fastify.addHook('onRequest', (request, _reply, done) => {
      if (!request.url.startsWith('/__bench/')) requests++;
      done();
    });
    fastify.get('/__bench/stats', async () => ({ sqlStatements: db.statementCount(), requests, rss: process.memoryUsage().rss }));
  }
  let migrated = false;
  fastify.get('/readyz', async (request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      // a database that accepts connections but does not answer is not ready either
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('readiness check timed out')), READY_TIMEOUT_MS);
      });
      await Promise.race([db.sql('SELECT 1'), timeout]);
      migrated ||= await migrationsApplied(db);
      if (migrated) return { status: 'ready' };
      return reply.code(503).send({ status: 'unavailable', reason: 'migrations pending' });
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    } finally {
      clearTimeout(timer);
    }
  });

  const schema = buildGraphQLSchema();
  const limits = graphqlLimits();
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    introspection: config.graphqlIntrospection,
    // depth, aliases, directives, cost and token limits (src/graphql/limits.ts)
    validationRules: limits.validationRules,
    parseOptions: limits.parseOptions,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    // main.ts owns SIGTERM/SIGINT (fastify.close() → onClose → apollo.stop()).
    // Apollo's own handlers (on outside NODE_ENV=test) would stop it a second
    // time concurrently, and that close never resolved: shutdown hung ~10 s.
    stopOnTerminationSignals: false,
    // "Did you mean …?" would leak the schema when introspection is off (see createFormatError)
    formatError: createFormatError((err) => fastify.log.error({ err }, 'graphql resolver error'), { hideSuggestions: !config.graphqlIntrospection }),
    plugins: [
      responseHead,
      config.graphqlIntrospection
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false })
        : ApolloServerPluginLandingPageDisabled(),
      ...limits.plugins,
      // Apollo's default cache-control plugin hooks every resolved field to compute a
      // cache policy this API never sets; off (measured in bench/tuning-log.md), with
      // the "no-store" it would have answered sent by responseHead.
      ApolloServerPluginCacheControlDisabled(),
      // Not a federated subgraph: Apollo's inline-trace plugin would only check that, on every request.
      ApolloServerPluginInlineTraceDisabled(),
    ],
  });
  await apollo.start();
  fastify.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    handler: fastifyApolloHandler(apollo, {
      context: async (request) => {
        try {
          return await buildContext(request);
        } catch (err) {
          if (err instanceof DomainError) throw contextError(err);
          if (isDatabaseUnavailable(err)) throw contextError(new ServiceUnavailableError());
          throw err;
        }
      },
    }),
  });

  registerRestRoutes(fastify, { schema, buildContext, routes: restRoutes });

  // fastify.close() drains in-flight requests itself; Apollo's fastify drain
  // plugin would call fastify.close() again from inside it and deadlock.
  fastify.addHook('onClose', async () => {
    await apollo.stop();
  });
  return { fastify, services };
}
