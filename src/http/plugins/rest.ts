import fp from 'fastify-plugin';
import type { GraphQLSchema } from 'graphql';
import { registerRestRoutes, type AnyRestRoute } from '../../rest/adapter';
import type { GraphQLExecutorKind } from '../../config';
import type { ContextBuilder } from '../request-context';

/** /api/v2/…: each route runs its fixed GraphQL operation on the shared schema (src/rest). */
export const rest = fp<{ schema: GraphQLSchema; buildContext: ContextBuilder; routes: AnyRestRoute[]; executor?: GraphQLExecutorKind }>(async (fastify, options) => {
  registerRestRoutes(fastify, options);
}, { name: 'rest' });
