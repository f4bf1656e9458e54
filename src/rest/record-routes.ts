import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { Type, type Static, type TSchema } from 'typebox';
import { NotFoundError } from '../domain/errors';
import { SHOWS_SECRET, type AnyRestRoute, type RestRequest, type RouteSchema } from './adapter';
import { offsetListPage, offsetVariables } from './pagination';
import { answer, errorResponses, HEADERS, IdParams, IgnoredBody, NoContent, OffsetPageQuery, offsetListFields } from './schemas';

// The routes every resource of the /api/v2 API has, each written once: an offset list,
// show, create, update and delete. A resource's routes file gives each its path,
// operation, words for the OpenAPI document, and how its JSON is made; the status
// codes, the 404 of a missing record, the Location header, the pagination fields and
// the error answers are decided here.

/** The words of a route in the OpenAPI document. */
type Described = Pick<RouteSchema, 'operationId' | 'summary' | 'description' | 'tags'>;

/** A route's request, typed from the parts of its schema it has. */
type RequestOf<P extends TSchema | undefined, B extends TSchema | undefined, Q extends TSchema | undefined = undefined> = RestRequest<Described & { response: Record<number, TSchema>; params: P; body: B; querystring: Q }>;

/** A record's JSON schema and the description of the answer that carries it. */
interface Answer<T extends TSchema> {
  schema: T;
  description: string;
}

type ListRequest = RequestOf<undefined, undefined, typeof OffsetPageQuery>;

type ById<TData> = TypedDocumentNode<TData, { id: string }>;

/**
 * GET <path>: one offset page (page, per_page) of `key` records, and `count`, the
 * number of all of them (`what`: the records, in words). A list under a record
 * (/groups/:id/memberships) names it with `parent`: the variables of its :id; the
 * operation fails with NOT_FOUND, a 404, when the account has no such record.
 */
export function offsetListRoute<TData, T extends TSchema, TVariables extends { page: number; perPage: number } = { page: number; perPage: number }>(route: {
  path: string;
  document: TypedDocumentNode<TData, TVariables>;
  schema: Described;
  key: string;
  what: string;
  record: T;
  records: (data: TData) => Static<T>[];
  count: (data: TData) => number;
  parent?: (id: string) => Omit<TVariables, 'page' | 'perPage'>;
}): AnyRestRoute {
  const body = Type.Object({ [route.key]: Type.Array(route.record), ...offsetListFields(route.what) }, { additionalProperties: false });
  const { parent } = route;
  return {
    method: 'GET',
    paths: [route.path],
    document: route.document,
    schema: {
      ...route.schema, ...(parent ? { params: IdParams } : {}), querystring: OffsetPageQuery,
      response: { 200: answer(body, `A page of ${route.what}`), ...errorResponses({ id: parent !== undefined }) },
    },
    variables: (req: RequestOf<typeof IdParams | undefined, undefined, typeof OffsetPageQuery>) => ({
      ...offsetVariables(req.query), ...(parent ? parent((req.params as Static<typeof IdParams>).id) : {}),
    }),
    respond: (data: TData, req: ListRequest) => ({ status: 200, body: { [route.key]: route.records(data), ...offsetListPage(req, route.count(data)) } }),
  };
}

/**
 * GET <path> of an operation without arguments: what the credentials stand for (the
 * current user or token, the account's settings) or every record (OAuth clients).
 */
export function getRoute<TData, T extends TSchema>(route: {
  path: string;
  document: TypedDocumentNode<TData, Record<string, never>>;
  schema: Described;
  answer: Answer<T>;
  body: (data: TData) => Static<T>;
}): AnyRestRoute {
  return {
    method: 'GET',
    paths: [route.path],
    document: route.document,
    schema: { ...route.schema, response: { 200: answer(route.answer.schema, route.answer.description), ...errorResponses() } },
    variables: () => ({}),
    respond: (data: TData) => ({ status: 200, body: route.body(data) }),
  };
}

/** GET <path>/:id: the record the operation found, or 404 when it found none (null). */
export function showRoute<TData, T extends TSchema>(route: {
  path: string;
  document: ById<TData>;
  schema: Described;
  answer: Answer<T>;
  body: (data: TData) => Static<T> | null | undefined;
}): AnyRestRoute {
  return {
    method: 'GET',
    paths: [route.path],
    document: route.document,
    schema: { ...route.schema, params: IdParams, response: { 200: answer(route.answer.schema, route.answer.description), ...errorResponses({ id: true }) } },
    variables: (req: RequestOf<typeof IdParams, undefined>) => ({ id: req.params.id }),
    respond: (data: TData) => {
      const body = route.body(data);
      if (body === null || body === undefined) throw new NotFoundError();
      return { status: 200, body };
    },
  };
}

/**
 * POST <path>: 201 with the new record and its Location (<path>/<id>.json); an answer
 * that shows a secret or a full token (`secret`) may be kept by no cache.
 */
export function createRoute<TData, TVariables, B extends TSchema, T extends TSchema, Q extends TSchema | undefined = undefined>(route: {
  path: string;
  document: TypedDocumentNode<TData, TVariables>;
  schema: Described & { body: B; querystring?: Q };
  answer: Answer<T>;
  secret?: boolean;
  variables: (req: RequestOf<undefined, B, Q>) => TVariables;
  created: (data: TData) => { id: string };
  body: (data: TData) => Static<T>;
}): AnyRestRoute {
  const headers = route.secret ? { ...HEADERS.location, ...HEADERS.noStore } : HEADERS.location;
  return {
    method: 'POST',
    paths: [route.path],
    document: route.document,
    schema: { ...route.schema, response: { 201: answer(route.answer.schema, route.answer.description, headers), ...errorResponses({ body: 'fields' }) } },
    variables: route.variables,
    respond: (data: TData, req: RestRequest) => ({
      status: 201,
      body: route.body(data),
      headers: { location: `${req.baseUrl}/api/v2${route.path}/${route.created(data).id}.json`, ...(route.secret ? SHOWS_SECRET : {}) },
    }),
  };
}

/** PUT <path>/:id: a partial update, answered with the record (200). */
export function updateRoute<TData, TVariables, B extends TSchema, T extends TSchema>(route: {
  path: string;
  document: TypedDocumentNode<TData, TVariables>;
  schema: Described & { body: B };
  answer: Answer<T>;
  variables: (req: RequestOf<typeof IdParams, B>) => TVariables;
  body: (data: TData) => Static<T>;
}): AnyRestRoute {
  return {
    method: 'PUT',
    paths: [route.path],
    document: route.document,
    schema: { ...route.schema, params: IdParams, response: { 200: answer(route.answer.schema, route.answer.description), ...errorResponses({ id: true, body: 'fields' }) } },
    variables: route.variables,
    respond: (data: TData) => ({ status: 200, body: route.body(data) }),
  };
}

/** DELETE <path>/:id: 204 with no body (`done` describes it: Deleted, Revoked). */
export function deleteRoute<TData>(route: { path: string; document: ById<TData>; schema: Described; done: string }): AnyRestRoute {
  return {
    method: 'DELETE',
    paths: [route.path],
    document: route.document,
    schema: { ...route.schema, params: IdParams, body: IgnoredBody, response: { 204: NoContent(route.done), ...errorResponses({ id: true, body: 'ignored' }) } },
    variables: (req: RequestOf<typeof IdParams, typeof IgnoredBody>) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  };
}
