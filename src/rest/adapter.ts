import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Kind, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { Static, TSchema } from 'typebox';
import { BadRequestError, DomainError } from '../domain/errors';
import { authorize, isPermission, type Permission } from '../domain/authorization';
import type { ContextBuilder } from '../http/request-context';
import type { GraphQLContext } from '../graphql/context';
import { envelopeFor, internalError, type ErrorResponse } from '../http/error-envelope';
import { restValidatorCompiler } from './validation';
import { prepareOperation } from '../graphql/executor';
import type { GraphQLExecutorKind } from '../config';

/**
 * A route's JSON Schemas (TypeBox, see src/rest/schemas.ts): Fastify validates
 * requests with them, serializes answers through `response`, and they are the
 * route's entry in the OpenAPI document.
 */
export interface RouteSchema {
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** every status the route answers, errors included */
  response: { [status: number]: TSchema | undefined };
}

type Of<T, Fallback> = T extends TSchema ? Static<T> : Fallback;

export interface RestRequest<S extends RouteSchema = RouteSchema> {
  /** validated by schema.params (the .json suffix of an :id removed) */
  params: Of<S['params'], Record<string, never>>;
  /** validated (and coerced) by schema.querystring; unknown parameters kept */
  query: Of<S['querystring'], Record<string, never>>;
  /** validated by schema.body; undefined without a body */
  body: Of<S['body'], undefined> | undefined;
  /** absolute base URL (PUBLIC_URL or scheme://host) */
  baseUrl: string;
  /** the request path and query as received, for pagination links */
  url: string;
}

interface RestResult<S extends RouteSchema = RouteSchema> {
  status: number;
  body?: { [K in keyof S['response']]: Of<S['response'][K], never> }[keyof S['response']];
  headers?: Record<string, string>;
}

/**
 * One REST route = one fixed GraphQL operation: variables in, Zendesk JSON out.
 * Authentication, authorization, validation and business rules all run below
 * the resolvers, exactly as for a GraphQL client; the schema checks types and
 * shapes at the edge.
 */
export interface RestRoute<TData = unknown, TVariables = Record<string, unknown>, S extends RouteSchema = RouteSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** paths under /api/v2, without the .json suffix (added automatically); the first one is documented as the operation, others as aliases */
  paths: string[];
  document: TypedDocumentNode<TData, TVariables>;
  schema: S;
  variables: (req: RestRequest<S>) => TVariables;
  respond: (data: TData, req: RestRequest<S>) => RestResult<S>;
}

/**
 * A route of any operation: the list of routes mixes documents of different types,
 * each checked where it is declared by defineRoute().
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- existential type, each element typed by defineRoute
export type AnyRestRoute = RestRoute<any, any, any>;

/** Headers of an answer that carries a secret or a full token: no cache may keep it. */
export const SHOWS_SECRET = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** Type helper: infers TData/TVariables from the document and the request types from the schema. */
export function defineRoute<TData, TVariables, const S extends RouteSchema>(route: RestRoute<TData, TVariables, S>): RestRoute<TData, TVariables, S> {
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
  options: { schema: GraphQLSchema; buildContext: ContextBuilder; routes: AnyRestRoute[]; executor?: GraphQLExecutorKind },
): void {
  const { schema, buildContext } = options;
  const contexts = new WeakMap<FastifyRequest, GraphQLContext>();
  for (const route of options.routes) {
    // Parsed by the loader, validated here once at start-up: never per request.
    const errors = validate(schema, route.document);
    if (errors.length) throw new Error(`REST operation for ${route.method} ${route.paths[0]} is invalid: ${errors.map((e) => e.message).join('; ')}`);
    const permission = rootPermission(schema, route.document);
    // compiled once, here (src/graphql/executor.ts)
    const execute = prepareOperation(schema, route.document, options.executor);

    // Authentication and authorization come before validation, so that a stranger
    // gets 401/403, never a 404/400/422 that tells something about the route.
    const authenticate = async (request: FastifyRequest) => {
      const params = request.params as Record<string, string>;
      if (params.id?.endsWith('.json')) params.id = params.id.slice(0, -5);
      const context = await buildContext(request);
      authorize(context.viewer, permission);
      // Fastify validates a missing body as null; a JSON null is no object either.
      if (request.body === null) throw new BadRequestError('The request body must be a JSON object');
      contexts.set(request, context);
    };

    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const context = contexts.get(request)!;
      const rest: RestRequest = { params: request.params as never, query: request.query as never, body: request.body as never, baseUrl: context.baseUrl, url: request.url };
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
    route.paths.forEach((path, i) => {
      // the first path is the operation; others (POST /oauth/clients/{id} for a new secret) are documented aliases
      const documented = { ...route.schema, ...(i > 0 ? { operationId: `${route.schema.operationId}Alias${i > 1 ? i : ''}`, description: `The same as ${route.method} /api/v2${route.paths[0].replace(/:(\w+)/g, '{$1}')}.` } : {}) };
      for (const url of withJsonVariants(path)) {
        fastify.route({
          method: route.method,
          url: `/api/v2${url}`,
          // every route also answers at its .json twin: documented once (docs say so)
          schema: url === path ? documented : { ...documented, hide: true },
          validatorCompiler: restValidatorCompiler,
          preValidation: authenticate,
          handler,
        });
      }
    });
  }
}
