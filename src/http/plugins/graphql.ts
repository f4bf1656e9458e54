import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { ApolloServer } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { asDomainError } from '../../domain/errors';
import { contextError, createFormatError, responseHead } from '../../graphql/errors';
import { graphqlLimits } from '../../graphql/limits';
import { EXAMPLE_DOCUMENT, EXAMPLE_HEADERS } from '../../graphql/example-document';
import type { GraphQLContext } from '../../graphql/context';
import type { ContextBuilder } from '../request-context';
import type { GraphQLExecutorKind } from '../../config';
import { compiledExecutorGateway, COMPILED_CACHE_SIZE, KnownQueries } from '../../graphql/executor';
import type { CostCheck, GraphQLLimits } from '../../graphql/limits';
import type { WebsocketHandler } from '@fastify/websocket';

export interface GraphQLPluginOptions {
  schema: GraphQLSchema;
  buildContext: ContextBuilder;
  /** introspection, the Sandbox landing page and field suggestions */
  introspection: boolean;
  /** graphql-jit (default) or graphql-js's interpreter (GRAPHQL_EXECUTOR) */
  executor?: GraphQLExecutorKind;
  /** GET /graphql's WebSocket upgrade (subscriptions.ts), built with this plugin's limits */
  subscriptions?: (limits: GraphQLLimits) => WebsocketHandler;
}

/** POST/GET /graphql: Apollo Server on the shared schema, with the limits in docs/api.md, "GraphQL". */
export const graphql = fp<GraphQLPluginOptions>(async (fastify, { schema, buildContext, introspection, executor = 'compiled', subscriptions }) => {
  const limits = graphqlLimits();
  // queries Apollo has accepted once, answered again without its pipeline (knownQueryAnswer)
  const known = executor === 'compiled' ? new KnownQueries() : undefined;
  const apollo = new ApolloServer<GraphQLContext>({
    // the schema, with operations run by a compiled executor (src/graphql/executor.ts), or Apollo's own
    ...(executor === 'compiled' ? { gateway: compiledExecutorGateway(schema, COMPILED_CACHE_SIZE, known) } : { schema }),
    introspection,
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
    formatError: createFormatError((err) => fastify.log.error({ err }, 'graphql resolver error'), { hideSuggestions: !introspection }),
    plugins: [
      responseHead,
      // Sandbox opens with the operation /graphiql starts with too (src/graphql/example-document.ts)
      introspection
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false, document: EXAMPLE_DOCUMENT, headers: { ...EXAMPLE_HEADERS } })
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
  // One context per request, whichever path answers it: a request the fast path
  // hands over to Apollo is not authenticated (nor its failed login counted) twice.
  const contexts = new WeakMap<FastifyRequest, Promise<GraphQLContext>>();
  const contextOf = (request: FastifyRequest): Promise<GraphQLContext> => {
    let context = contexts.get(request);
    if (!context) {
      context = buildContext(request).catch((err: unknown) => {
        const domain = asDomainError(err);
        throw domain ? contextError(domain) : err;
      });
      contexts.set(request, context);
    }
    return context;
  };
  // (typed by the integration for its own route generics)
  const apolloHandler = fastifyApolloHandler(apollo, { context: contextOf }) as unknown as RouteHandlerMethod;
  const stats: KnownQueryStats = { answered: 0, handedOver: 0 };
  fastify.decorate('graphqlKnownQueries', stats);
  const answerKnown = known && knownQueryAnswer(schema, known, limits.withinCost, contextOf, stats);
  const handler = answerKnown
    ? async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
        const answer = await answerKnown(request, reply);
        return answer ?? apolloHandler.call(this, request, reply);
      }
    : apolloHandler;
  // Apollo's integration builds a URL from the Host before our context: a bad Host is refused (or made plain) first
  const onRequest = buildContext.guardHost;
  // GET also upgrades to WebSocket (graphql-ws subscriptions), which @fastify/websocket allows on GET routes only
  fastify.route({ url: '/graphql', method: 'GET', onRequest, handler, ...(subscriptions ? { wsHandler: subscriptions(limits) } : {}) });
  fastify.route({ url: '/graphql', method: ['POST', 'OPTIONS'], onRequest, handler });
  // fastify.close() drains in-flight requests itself; Apollo's fastify drain
  // plugin would call fastify.close() again from inside it and deadlock.
  fastify.addHook('onClose', async () => {
    await apollo.stop();
  });
}, { name: 'graphql' });

/** What the fast path did so far (tests; operators): known queries it answered, and those it handed over to Apollo. */
export interface KnownQueryStats {
  answered: number;
  handedOver: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    graphqlKnownQueries: KnownQueryStats;
  }
}

const JSON_CONTENT_TYPE = /^application\/json\s*(;|$)/i;
/** Accept headers for which Apollo answers `application/json; charset=utf-8` (none, any, or JSON itself). */
const PLAIN_JSON_ACCEPT = /^(\*\/\*|application\/json|application\/json;\s*charset=utf-8)$/i;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The fast path: a POST of a query Apollo has already parsed, validated and run
 * (KnownQueries, filled by the compiled executor), with variables within the cost
 * budget, is executed here by the same compiled query, context and limits, and
 * answered as Apollo would answer it when it succeeds: 200, `{"data": …}`,
 * `application/json; charset=utf-8`, `no-store`. Apollo's per-request pipeline
 * (its request parsing, content negotiation, plugin phases and query hashing:
 * ~70 µs, bench/tuning-log.md) is what this saves.
 *
 * Everything else is Apollo's, unchanged: GET, mutations, unknown texts, other
 * Accept or Content-Type headers, extensions (persisted queries), bodies Apollo
 * would refuse, costs over the budget, a context that fails (the same failed
 * context is handed over, not rebuilt), and any answer with errors: that query is
 * run again by Apollo (queries read only; the object budget starts again), so
 * that every error keeps Apollo's formatting, status and headers.
 * Returns undefined when Apollo is to answer.
 */
function knownQueryAnswer(
  schema: GraphQLSchema,
  known: KnownQueries,
  withinCost: CostCheck,
  contextOf: (request: FastifyRequest) => Promise<GraphQLContext>,
  stats: KnownQueryStats,
) {
  const handOver = () => {
    stats.handedOver++;
    return undefined;
  };
  return async (request: FastifyRequest, reply: FastifyReply): Promise<string | undefined> => {
    if (request.method !== 'POST') return undefined;
    const contentType = request.headers['content-type'];
    const accept = request.headers.accept;
    if (contentType === undefined || !JSON_CONTENT_TYPE.test(contentType)) return undefined;
    if (accept !== undefined && !PLAIN_JSON_ACCEPT.test(accept)) return undefined;
    const body = request.body;
    if (!isRecord(body)) return undefined;
    let query: unknown;
    let variables: unknown;
    let operationName: unknown;
    for (const key in body) {
      if (key === 'query') query = body.query;
      else if (key === 'variables') variables = body.variables;
      else if (key === 'operationName') operationName = body.operationName;
      else return undefined;
    }
    if (typeof query !== 'string') return undefined;
    if (variables !== undefined && variables !== null && !isRecord(variables)) return undefined;
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
    const entry = known.find(query, operationName ?? null);
    if (!entry) return undefined;
    const variableValues = variables ?? {};
    // with variables, the cost depends on them (cached per variable set)
    if (!entry.fixedCost && withinCost(schema, entry.document, variableValues, operationName ?? undefined) !== true) return handOver();
    let context: GraphQLContext;
    try {
      context = await contextOf(request);
    } catch {
      return handOver();
    }
    let result;
    try {
      result = await entry.execute(context, variableValues);
    } catch {
      result = undefined;
    }
    if (!result || result.errors) {
      context.objects = undefined;
      return handOver();
    }
    stats.answered++;
    // the head in the order Apollo writes it (its plugins' headers, then the content type)
    void reply.code(200).header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify({ data: result.data }) + '\n';
  };
}
