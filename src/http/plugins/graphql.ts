import fp from 'fastify-plugin';
import type { GraphQLSchema } from 'graphql';
import { ApolloServer } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { DomainError, ServiceUnavailableError } from '../../domain/errors';
import { isDatabaseUnavailable } from '../../db/errors';
import { contextError, createFormatError, responseHead } from '../../graphql/errors';
import { graphqlLimits } from '../../graphql/limits';
import type { GraphQLContext } from '../../graphql/context';
import type { ContextBuilder } from '../request-context';
import type { GraphQLExecutorKind } from '../../config';
import { compiledExecutorGateway } from '../../graphql/executor';

export interface GraphQLPluginOptions {
  schema: GraphQLSchema;
  buildContext: ContextBuilder;
  /** introspection, the Sandbox landing page and field suggestions */
  introspection: boolean;
  /** graphql-jit (default) or graphql-js's interpreter (GRAPHQL_EXECUTOR) */
  executor?: GraphQLExecutorKind;
}

/** POST/GET /graphql: Apollo Server on the shared schema, with the limits of API.md §8. */
export const graphql = fp<GraphQLPluginOptions>(async (fastify, { schema, buildContext, introspection, executor = 'compiled' }) => {
  const limits = graphqlLimits();
  const apollo = new ApolloServer<GraphQLContext>({
    // the schema, with operations run by a compiled executor (src/graphql/executor.ts), or Apollo's own
    ...(executor === 'compiled' ? { gateway: compiledExecutorGateway(schema) } : { schema }),
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
      introspection ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false }) : ApolloServerPluginLandingPageDisabled(),
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
    // Apollo's integration builds a URL from the Host before our context: a bad Host is refused (or made plain) first
    onRequest: buildContext.guardHost,
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
  // fastify.close() drains in-flight requests itself; Apollo's fastify drain
  // plugin would call fastify.close() again from inside it and deadlock.
  fastify.addHook('onClose', async () => {
    await apollo.stop();
  });
}, { name: 'graphql' });
