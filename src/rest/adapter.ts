import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Kind, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { prepareOperation } from '../graphql/executor';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { BadRequestError, DomainError } from '../domain/errors';
import { authorize, isPermission, type Permission } from '../domain/authorization';
import type { ContextBuilder } from '../http/request-context';
import { envelopeFor, internalError, notFound, type ErrorResponse } from '../http/error-envelope';

export interface RestRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Record<string, unknown> | undefined;
  /** absolute base URL (PUBLIC_URL or scheme://host) */
  baseUrl: string;
  /** the request path and query as received, for pagination links */
  url: string;
}

export interface RestResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * One REST route = one fixed GraphQL operation: variables in, Zendesk JSON out.
 * Authentication, authorization, validation and business rules all run below
 * the resolvers, exactly as for a GraphQL client.
 */
export interface RestRoute<TData = unknown, TVariables = Record<string, unknown>> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** paths under /api/v2, without the .json suffix (added automatically) */
  paths: string[];
  document: TypedDocumentNode<TData, TVariables>;
  variables: (req: RestRequest) => TVariables;
  respond: (data: TData, req: RestRequest) => RestResult;
}

/**
 * A route of any operation: the list of routes mixes documents of different types,
 * each checked where it is declared by defineRoute().
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- existential type, each element typed by defineRoute
export type AnyRestRoute = RestRoute<any, any>;

/** Headers of an answer that carries a secret or a full token: no cache may keep it. */
export const SHOWS_SECRET = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** Type helper: infers TData/TVariables from the document. */
export function defineRoute<TData, TVariables>(route: RestRoute<TData, TVariables>): RestRoute<TData, TVariables> {
  return route;
}

/**
 * The permission of the operation's root field (its @Allow, kept in the field's
 * extensions): the REST route authorizes with it before reading the body, so a
 * stranger gets 401/403, never a 422 that reveals the validation rules. The
 * resolvers check again, with the same policy.
 */
function rootPermission(schema: GraphQLSchema, document: DocumentNode): Permission {
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const root = operation && (operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType());
  const selection = operation?.selectionSet.selections[0];
  const field = root && selection?.kind === Kind.FIELD ? root.getFields()[selection.name.value] : undefined;
  const permission = field?.extensions?.permission;
  if (!isPermission(permission)) throw new Error(`REST operation ${operation?.name?.value ?? '?'}: its root field declares no permission (@Allow)`);
  return permission;
}

function send(reply: FastifyReply, r: ErrorResponse | RestResult) {
  if (r.headers) reply.headers(r.headers);
  reply.code(r.status);
  if (r.body === undefined) return reply.send();
  return reply.type('application/json; charset=utf-8').send(r.body);
}

/** The .json variant of a path: /a/:id → /a/:id.json is handled by stripping the suffix from the last param. */
function withJsonVariants(path: string): string[] {
  return path.endsWith('/:id') ? [path] : [path, `${path}.json`];
}

export function registerRestRoutes(
  fastify: FastifyInstance,
  options: { schema: GraphQLSchema; buildContext: ContextBuilder; routes: AnyRestRoute[] },
): void {
  const { schema, buildContext } = options;
  for (const route of options.routes) {
    // Parsed by the loader, validated here once at start-up: never per request.
    const errors = validate(schema, route.document);
    if (errors.length) throw new Error(`REST operation for ${route.method} ${route.paths[0]} is invalid: ${errors.map((e) => e.message).join('; ')}`);
    const permission = rootPermission(schema, route.document);
    // compiled once, here (src/graphql/executor.ts)
    const execute = prepareOperation(schema, route.document);

    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const params = { ...(request.params as Record<string, string>) };
      if (params.id?.endsWith('.json')) params.id = params.id.slice(0, -5);
      const raw = request.body;
      if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw))) {
        throw new BadRequestError('The request body must be a JSON object');
      }
      const context = await buildContext(request);
      authorize(context.viewer, permission);
      const rest: RestRequest = { params, query: request.query as Record<string, unknown>, body: raw as Record<string, unknown> | undefined, baseUrl: context.baseUrl, url: request.url };
      const result = await execute(context, route.variables(rest) as Record<string, unknown>);
      if (result.errors?.length) {
        const first = result.errors[0];
        const cause = first.originalError ?? first;
        const mapped = envelopeFor(cause);
        if (mapped) return send(reply, mapped);
        if (!first.originalError || !(first.originalError instanceof DomainError)) request.log.error({ err: cause }, 'REST operation failed');
        return send(reply, internalError());
      }
      return send(reply, route.respond(result.data as never, rest));
    };
    for (const path of route.paths.flatMap(withJsonVariants)) {
      fastify.route({ method: route.method, url: `/api/v2${path}`, handler });
    }
  }
}

export { notFound };
