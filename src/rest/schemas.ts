/**
 * JSON Schemas of the /api/v2 routes (TypeBox), and the pieces they share.
 *
 * A route's `schema` (RestRoute.schema, beside the route in src/rest/*.routes.ts) is
 * the contract at the edge: Fastify validates requests with it (src/rest/validation.ts),
 * serializes answers through its `response` schemas (fast-json-stringify), and
 * @fastify/swagger turns it into the OpenAPI document (/api/v2/openapi.json,
 * docs/openapi.json). Types and shapes only: blank values, lengths, scope words,
 * redirect URIs, phone numbers … stay in the domain, which answers 422 as before.
 *
 * A record's show, create, update, delete and offset-list routes, and GETs without
 * arguments, come from src/rest/record-routes.ts, which builds their schemas from a few
 * words and the record's JSON schema; a paged list takes its parameters (PageQuery) and
 * answer fields (PageFields) from here and its values from src/rest/pagination.ts.
 *
 * Adding a schema to any other route (see oauth-clients.routes.ts for every kind):
 *   schema: {
 *     operationId: 'listGroups', summary: 'List groups', tags: ['Groups'],
 *     params: IdParams,                                   // routes with :id (a bad id → 404)
 *     querystring: Type.Object({                          // optional parameters; a bad one → 400 naming it
 *       page: QueryInteger('page must be a positive integer', { minimum: 1 }),
 *       active: QueryBoolean('active must be true or false'),
 *     }),
 *     body: wrappedBody('group', {                         // POST/PUT: flat or {"group": {…}}; a wrong type → 422
 *       name: BodyField(Type.String(), 'Name: must be a string'),
 *     }),                                                 // DELETE: IgnoredBody
 *     response: { 200: answer(GroupJson, 'The group'), ...errorResponses({ id: true, body: 'fields' }) },
 *   },
 *   variables: (req) => ({ id: req.params.id, input: { name: unwrap(req.body, 'group').name } }),
 *   - req.params, req.query and req.body are typed from the schema (Static), and so is the
 *     body respond() returns. The old-style checks (type switches, parseInt of query
 *     parameters, "is the body an object") are not needed: a request that reaches
 *     variables() has the declared types.
 *   - A record: Type.Object({...}, { additionalProperties: false, title: 'Group' }); a titled
 *     schema is kept once under components.schemas. No body: NoContent(description);
 *     headers of an answer: answer(schema, description, HEADERS.location).
 *   - Every field a handler answers must be in its response schema: the serializer drops
 *     anything else. Declare every status the route answers, errors included
 *     (errorResponses): in tests, an answer whose status or body the document does not
 *     declare fails the test file (test/helpers/openapi-conformance.ts).
 *   - Body fields accept null (the domain decides whether that is blank) and are never
 *     coerced: "123" is no integer. Query values are strings, coerced strictly
 *     (integers written as digits, booleans as true/false). Unknown fields and
 *     parameters are ignored.
 *   - `x-invalid` carries the description of the error a value of the wrong type gets
 *     (422 details or 400); it is registered as a keyword in the Ajv instances.
 *   - Then `npm run openapi:emit` and commit docs/openapi.json (a test fails when stale).
 */
import { Type, type Static, type TProperties, type TSchema, type TUnsafe } from 'typebox';
import { MUST_BE, ValidationError } from '../domain/errors';

/** The keyword naming the error description of a wrongly typed value. */
export const INVALID = 'x-invalid';

const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

// ---------------------------------------------------------------- building blocks

/** `T` or null: `type: [t, "null"]` for a plain type (as fast-json-stringify and OpenAPI 3.1 like it), else anyOf. */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}): TUnsafe<Static<T> | null> {
  const s = schema as Record<string, unknown>;
  if (typeof s.type === 'string' && s.const === undefined) {
    return Type.Unsafe<Static<T> | null>({ ...s, ...options, type: [s.type, 'null'], ...(Array.isArray(s.enum) ? { enum: [...s.enum, null] } : {}) });
  }
  const { anyOf, ...rest } = s;
  // a union gets one more member rather than a union of a union
  if (Array.isArray(anyOf)) return Type.Unsafe<Static<T> | null>({ ...rest, ...options, anyOf: [...anyOf, { type: 'null' }] });
  return Type.Unsafe<Static<T> | null>({ ...options, anyOf: [schema, { type: 'null' }] });
}

/** One of some strings: `{type: "string", enum: [...]}`. */
export function StringEnum<const V extends readonly string[]>(values: V, options: Record<string, unknown> = {}): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ ...options, type: 'string', enum: [...values] });
}

/** A body field: its type (or null), and the 422 description a value of another type gets. */
export function BodyField<T extends TSchema>(schema: T, invalid: string, description?: string): TUnsafe<Static<T> | null> {
  return Nullable(schema, { [INVALID]: invalid, ...(description ? { description } : {}) });
}

/** The fields of a body as the handler reads them: each may be absent or null. */
export type Fields<P extends TProperties> = { [K in keyof P]?: Static<P[K]> };
/** A body that carries `Fields` flat or under its wrapper key. */
export type Wrapped<P extends TProperties> = Fields<P> & { [wrapper: string]: unknown };

/**
 * A request body of `fields`, flat (as in Zendesk's API) or wrapped as
 * {"<wrapper>": {…}} (Support API style). Every field is optional and nullable;
 * unknown fields are allowed and ignored. Read it with unwrap().
 */
export function wrappedBody<P extends TProperties>(wrapper: string, fields: P, description?: string): TUnsafe<Wrapped<P>> {
  const optional = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)]));
  const label = wrapper.charAt(0).toUpperCase() + wrapper.slice(1).replace(/_/g, ' ');
  const wrapped = Type.Object(optional, { [INVALID]: `${label}: must be an object`, description: 'The same fields, wrapped' });
  return Type.Unsafe<Wrapped<P>>(
    Type.Object({ ...optional, [wrapper]: Type.Optional(wrapped) }, {
      description: `${description ? `${description} ` : ''}Flat, or wrapped as {"${wrapper}": {…}}. Unknown and read-only fields are ignored.`,
    }),
  );
}

/** The fields of a wrappedBody: inside the wrapper when it is there (the schema made it an object), else the body itself. */
export function unwrap<P extends TProperties>(body: Wrapped<P> | undefined, wrapper: string): Fields<P> {
  return ((body?.[wrapper] as Fields<P> | undefined) ?? body ?? {}) as Fields<P>;
}

/** Routes that read no field: a body, if any, must still be a JSON object. */
export const IgnoredBody = Type.Object({}, { description: 'Ignored (a body, if sent, must be a JSON object).' });

/** A query parameter holding an integer, written as digits (-?[0-9]+); anything else → 400 `invalid`. */
function QueryInteger(invalid: string, options: { minimum?: number; maximum?: number; description?: string } = {}) {
  return Type.Optional(Type.Integer({ maximum: 999_999_999, ...options, [INVALID]: invalid }));
}

/** A query parameter holding true or false; anything else → 400 `invalid`. */
export function QueryBoolean(invalid: string, options: { description?: string; default?: boolean } = {}) {
  return Type.Optional(Type.Boolean({ ...options, [INVALID]: invalid }));
}

/** A query parameter taken as a string. */
export function QueryString(options: { description?: string; pattern?: string; invalid?: string } = {}) {
  const { invalid, ...rest } = options;
  return Type.Optional(Type.String({ ...rest, ...(invalid ? { [INVALID]: invalid } : {}) }));
}

// ---------------------------------------------------------------- ids

/** An id in a path: a positive integer (anything else answers 404, docs/api.md, "Errors"). */
export const IdParams = Type.Object({
  id: Type.String({ pattern: '^[1-9][0-9]{0,18}$', description: 'A positive integer id (a `.json` suffix is accepted).' }),
});

/** A positive integer id in a body: a JSON number (or, where noted, its digits as a string). */
export const PositiveInteger = Type.Integer({ minimum: 1, maximum: SAFE_INTEGER });

/** A body id the token route also takes as a string of digits (Zendesk clients send both). */
export const IdNumberOrDigits = Type.Union([PositiveInteger, Type.String({ pattern: '^[0-9]{1,19}$' })]);

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with seconds', examples: ['2026-11-21T10:29:59Z'] });
export const NullableTimestamp = Nullable(Type.String({ format: 'date-time' }), { description: 'ISO 8601 UTC with seconds, or null', examples: ['2026-11-21T10:29:59Z'] });

// ---------------------------------------------------------------- pagination

/** Query parameters of a paged list: cursor mode with any page[…], offset mode otherwise (docs/api.md, "Pagination"). */
export const PageQuery = {
  'page[size]': QueryInteger('page[size] must be a positive integer', { minimum: 1, description: 'Cursor mode: 1..100 (larger values are clamped), default 100' }),
  'page[after]': QueryString({ description: 'Cursor mode: the after_cursor of the previous page' }),
  'page[before]': QueryString({ description: 'Cursor mode: the before_cursor of the next page (pages backwards)' }),
  page: QueryInteger('page must be a positive integer', { minimum: 1, description: 'Offset mode: page number, from 1 (page × per_page ≤ 10,000)' }),
  per_page: QueryInteger('per_page must be a positive integer', { minimum: 1, description: 'Offset mode: 1..100 (larger values are clamped), default 100' }),
};

const Link = Nullable(Type.String({ format: 'uri' }));

/** The query of a list that has offset pages only (groups, voice phone numbers). */
export const OffsetPageQuery = Type.Object({ page: PageQuery.page, per_page: PageQuery.per_page });

/** The fields such a list's answer has beside its records (`count`: the number of `what` of the account). */
export const offsetListFields = (what: string) => ({
  next_page: Link,
  previous_page: Link,
  count: Type.Integer({ minimum: 0, description: `The number of ${what} of the account` }),
});

/** The fields a paged list adds beside its records: `meta` and `links` in cursor mode, the rest in offset mode. */
export const PageFields = {
  meta: Type.Optional(Type.Object({ has_more: Type.Boolean(), after_cursor: Nullable(Type.String()), before_cursor: Nullable(Type.String()) }, {
    additionalProperties: false,
    description: 'Cursor mode only',
  })),
  links: Type.Optional(Type.Object({ next: Link, prev: Link }, { additionalProperties: false, description: 'Cursor mode only: absolute URLs keeping the other parameters' })),
  next_page: Type.Optional(Nullable(Type.String({ format: 'uri' }), { description: 'Offset mode only' })),
  previous_page: Type.Optional(Nullable(Type.String({ format: 'uri' }), { description: 'Offset mode only' })),
  count: Type.Optional(Type.Integer({ minimum: 0, description: 'Offset mode only: the number of records in the list' })),
};

// ---------------------------------------------------------------- answers

/** One record under its key, as Zendesk answers it: {"user": {…}}. */
export function Keyed<K extends string, T extends TSchema>(key: K, record: T) {
  return Type.Object({ [key]: record } as Record<K, T>, { additionalProperties: false });
}

/** An answer without a body (204, or 201 of a callback request). */
export function NoContent(description: string, headers?: Record<string, TSchema>) {
  return Type.Null({ description, ...(headers ? { headers } : {}) });
}

/** Response headers as @fastify/swagger documents them (`headers` beside a response schema). */
export const HEADERS = {
  location: { location: Type.String({ format: 'uri', description: "The record's URL (.json)" }) },
  noStore: {
    'cache-control': Type.String({ const: 'no-store', description: 'The answer shows a secret: no cache may keep it' }),
    pragma: Type.String({ const: 'no-cache' }),
  },
  retryAfter: { 'retry-after': Type.String({ pattern: '^[0-9]+$', description: 'Seconds to wait' }) },
  rateLimit: {
    'x-rate-limit': Type.String({ pattern: '^[0-9]+$', description: 'The budget of the window' }),
    'x-rate-limit-remaining': Type.String({ pattern: '^[0-9]+$', description: 'What is left of it' }),
  },
};

/** A response: the schema of its body, a description and headers (@fastify/swagger reads both). */
export function answer<T extends TSchema>(schema: T, description: string, headers?: Record<string, TSchema>): T {
  return { ...schema, 'x-response-description': description, ...(headers ? { headers } : {}) };
}

const envelope = (error: string, description: TSchema = Type.String()) =>
  Type.Object({ error: Type.Literal(error), description }, { additionalProperties: false });

const DETAIL_CODES = ['BlankValue', 'InvalidValue', 'NotFound', 'TooLong'] as const;

/** Zendesk's error envelope per status (docs/api.md, "Errors"). */
export const ERRORS = {
  400: answer(envelope('InvalidRequest'), 'Malformed JSON, a body that is not a JSON object, a bad query parameter or cursor, or no bearer token for …/current'),
  401: answer(Type.Object({ error: Type.Literal("Couldn't authenticate you") }, { additionalProperties: false }), 'Missing or wrong credentials', {
    'www-authenticate': Type.String({ description: 'Basic realm="api", or Bearer error="invalid_token" when a bearer token was sent' }),
  }),
  403: answer(envelope('Forbidden', Type.Literal('You do not have access to this resource')), 'The role or the token scopes forbid it'),
  404: answer(envelope('RecordNotFound', Type.Literal('Not found')), 'No such record in the account, or an id that is not a positive integer'),
  409: answer(envelope('Conflict'), "The resource's state forbids the request; the description says why and what to do"),
  413: answer(envelope('PayloadTooLarge'), 'A body over 64 KiB'),
  415: answer(envelope('UnsupportedMediaType'), 'A body that is not application/json'),
  422: answer(
    Type.Object(
      {
        error: Type.Literal('RecordInvalid'),
        description: Type.Literal('Record validation errors'),
        details: Type.Record(
          Type.String(),
          Type.Array(Type.Object({ error: StringEnum(DETAIL_CODES), description: Type.String() }, { additionalProperties: false }), { minItems: 1 }),
          { description: 'Every field problem at once, by snake_case field name', minProperties: 1 },
        ),
      },
      { additionalProperties: false },
    ),
    'Field validation',
  ),
  429: answer(envelope('TooManyRequests'), 'Throttled', HEADERS.retryAfter),
  500: answer(envelope('InternalError', Type.Literal('Internal error')), 'A bug'),
  503: answer(envelope('ServiceUnavailable'), 'The database is unreachable', HEADERS.retryAfter),
};

/**
 * The error answers of a route: those of every route (400 for a bad Host header,
 * 401, 403, 429 for the login throttle, 500, 503), plus 404 for routes with an id,
 * and for routes that read a body 413 and 415 (and 422 when it has fields), and 409 for
 * routes a resource's state can refuse.
 */
export function errorResponses(options: { id?: boolean; body?: 'ignored' | 'fields'; conflict?: boolean; extra?: Partial<typeof ERRORS> } = {}) {
  const out: Partial<typeof ERRORS> = { 400: ERRORS[400], 401: ERRORS[401], 403: ERRORS[403] };
  if (options.id) out[404] = ERRORS[404];
  if (options.conflict) out[409] = ERRORS[409];
  if (options.body) Object.assign(out, { 413: ERRORS[413], 415: ERRORS[415] });
  if (options.body === 'fields') out[422] = ERRORS[422];
  Object.assign(out, { 429: ERRORS[429], 500: ERRORS[500], 503: ERRORS[503] }, options.extra);
  return out;
}

// ---------------------------------------------------------------- messages the schemas carry

/** `<Label>: must be …` (MUST_BE, shared with the domain's own checks). */
export const mustBe = (label: string, what: keyof typeof MUST_BE) => `${label}: ${MUST_BE[what]}`;

/**
 * A required body field that the route's GraphQL operation declares non-null (an enum
 * argument): absent or null, the operation cannot even be run, so the route answers the
 * domain's 422 BlankValue itself instead of letting variable coercion fail as a 500.
 */
export function required<T>(value: T | null | undefined, field: string, label: string): T {
  if (value === undefined || value === null) throw new ValidationError({ [field]: [{ error: 'BlankValue', description: `${label}: cannot be blank` }] });
  return value;
}
