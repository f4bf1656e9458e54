import { isDeepStrictEqual } from 'node:util';
import type { LightMyRequestResponse } from 'fastify';
import { hmacHex, randomUrlSafe } from '../../src/domain/crypto';
import { TEST_HASH_KEY, type TestContext, type TestUser } from './test-app';

// One interface over both transports of the OAuth clients API (docs/api.md, "OAuth clients"), so
// that a single table of cases runs through REST and GraphQL alike. Every
// outcome is normalized: success → { ok, value } with the record in REST's
// snake_case shape; failure → { ok: false, code, fields } where `code` is the
// GraphQL extensions.code (REST statuses are mapped onto it only when the body
// is exactly Zendesk's envelope of docs/api.md, "Errors"; anything else becomes an
// "UNEXPECTED …" code that names the raw response, so a test fails loudly).

/** `rest.json` is REST with the `.json` suffix on every path. */
export type Transport = 'rest' | 'rest.json' | 'graphql';
export const isRest = (t: Transport) => t !== 'graphql';

/** A client as REST returns it; GraphQL records are converted to this shape. */
export interface ClientJson {
  id: number;
  name: string;
  company: string | null;
  client_identifier: string;
  client_secret: string;
  client_type: string;
  redirect_uris: string;
  scopes: string;
  agent_id: number | null;
  create_date: string;
  update_date: string | null;
}

export const CLIENT_KEYS = [
  'agent_id', 'client_identifier', 'client_secret', 'client_type', 'company', 'create_date', 'id', 'name', 'redirect_uris', 'scopes', 'update_date',
] as const;

export type DetailCode = 'BlankValue' | 'InvalidValue' | 'NotFound' | 'TooLong';
export type Details = Record<string, { error: string; description: string }[]>;

export interface Success<T> {
  ok: true;
  value: T;
  res: LightMyRequestResponse;
}
export interface Failure {
  ok: false;
  /** UNAUTHENTICATED | FORBIDDEN | NOT_FOUND | BAD_USER_INPUT | BAD_REQUEST, or "UNEXPECTED …" */
  code: string;
  /** BAD_USER_INPUT: field → the detail codes reported for it */
  fields?: Record<string, string[]>;
  details?: Details;
  /** GraphQL oauthClient(id) answered null without an error */
  nullResult?: boolean;
  res: LightMyRequestResponse;
}
export type Outcome<T> = Success<T> | Failure;

/** generate-secret routes: POST /oauth/clients/{id} or POST /oauth/clients/{id}/client_secret, optionally with an empty JSON body */
export type SecretVariant = 'id' | 'client_secret' | 'id+empty-json' | 'client_secret+empty-json' | 'generate_secret' | 'generate_secret+empty-json';
export const SECRET_VARIANTS: SecretVariant[] = ['id', 'client_secret', 'id+empty-json', 'client_secret+empty-json', 'generate_secret', 'generate_secret+empty-json'];

export interface ClientsDriver {
  transport: Transport;
  list(): Promise<Outcome<ClientJson[]>>;
  show(id: string | number): Promise<Outcome<ClientJson>>;
  create(body: Record<string, unknown>): Promise<Outcome<ClientJson>>;
  update(id: string | number, body: Record<string, unknown>): Promise<Outcome<ClientJson>>;
  delete(id: string | number): Promise<Outcome<true>>;
  generateSecret(id: string | number, variant?: SecretVariant): Promise<Outcome<{ client_secret: string }>>;
}

/** Thrown by the GraphQL driver for a body it cannot express (a case that must be marked REST-only). */
export class NotExpressible extends Error {}

export function clientsDriver(ctx: TestContext, transport: Transport, auth?: string): ClientsDriver {
  return transport === 'graphql' ? graphqlDriver(ctx, auth) : restDriver(ctx, transport === 'rest.json', auth);
}

// ---------------------------------------------------------------- outcomes

export function describeOutcome(o: Outcome<unknown>): string {
  return o.ok ? `success ${JSON.stringify(o.value)}` : `${o.code}${o.fields ? ' ' + JSON.stringify(o.fields) : ''} (HTTP ${o.res.statusCode} ${o.res.body.slice(0, 500)})`;
}

/** The value of a success, or a test failure that shows what came back instead. */
export function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`expected success, got ${describeOutcome(o)}`);
  return o.value;
}

/** The failure, or a test failure that shows the unexpected success. */
export function failed(o: Outcome<unknown>): Failure {
  if (o.ok) throw new Error(`expected a failure, got ${describeOutcome(o)}`);
  return o;
}

function wellFormedDetails(details: unknown): details is Details {
  if (!details || typeof details !== 'object' || Array.isArray(details) || Object.keys(details).length === 0) return false;
  return Object.values(details).every(
    (list) =>
      Array.isArray(list) &&
      list.length > 0 &&
      list.every(
        (d) =>
          d && typeof d === 'object' && isDeepStrictEqual(Object.keys(d).sort(), ['description', 'error']) &&
          ['BlankValue', 'InvalidValue', 'NotFound', 'TooLong'].includes(d.error) && typeof d.description === 'string' && d.description.length > 0,
      ),
  );
}

const fieldsOf = (details: Details) => Object.fromEntries(Object.entries(details).map(([k, v]) => [k, v.map((d) => d.error)]));

// ---------------------------------------------------------------- REST

const API = '/api/v2/oauth/clients';
export const FORBIDDEN_BODY = { error: 'Forbidden', description: 'You do not have access to this resource' };
export const NOT_FOUND_BODY = { error: 'RecordNotFound', description: 'Not found' };
export const UNAUTHENTICATED_BODY = { error: "Couldn't authenticate you" };
const JSON_TYPE = 'application/json; charset=utf-8';

function parse(res: LightMyRequestResponse): unknown {
  try {
    return res.body === '' ? undefined : JSON.parse(res.body);
  } catch {
    return undefined;
  }
}

/** Maps a REST error response onto the GraphQL code, only when it is exactly the envelope of docs/api.md, "Errors". */
export function restFailure(res: LightMyRequestResponse): Failure {
  const body = parse(res) as Record<string, unknown> | undefined;
  const json = res.headers['content-type'] === JSON_TYPE && body !== undefined && typeof body === 'object' && !Array.isArray(body);
  const exactly = (expected: unknown) => json && isDeepStrictEqual(body, expected);
  const keys = json ? Object.keys(body!).sort() : [];
  const unexpected: Failure = { ok: false, code: `UNEXPECTED HTTP ${res.statusCode}`, res };
  switch (res.statusCode) {
    case 401:
      return exactly(UNAUTHENTICATED_BODY) && res.headers['www-authenticate'] ? { ok: false, code: 'UNAUTHENTICATED', res } : unexpected;
    case 403:
      return exactly(FORBIDDEN_BODY) ? { ok: false, code: 'FORBIDDEN', res } : unexpected;
    case 404:
      return exactly(NOT_FOUND_BODY) ? { ok: false, code: 'NOT_FOUND', res } : unexpected;
    case 400:
      return json && isDeepStrictEqual(keys, ['description', 'error']) && body!.error === 'InvalidRequest' && typeof body!.description === 'string' && body!.description
        ? { ok: false, code: 'BAD_REQUEST', res }
        : unexpected;
    case 422:
      if (
        json && isDeepStrictEqual(keys, ['description', 'details', 'error']) &&
        body!.error === 'RecordInvalid' && body!.description === 'Record validation errors' && wellFormedDetails(body!.details)
      ) {
        return { ok: false, code: 'BAD_USER_INPUT', details: body!.details, fields: fieldsOf(body!.details), res };
      }
      return unexpected;
    default:
      return unexpected;
  }
}

function restDriver(ctx: TestContext, json: boolean, auth?: string): ClientsDriver {
  const sfx = json ? '.json' : '';
  const headers: Record<string, string> = auth ? { authorization: auth } : {};
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, extra: Record<string, string> = {}) =>
    ctx.inject({ method, url, headers: { ...headers, ...extra }, ...(payload === undefined ? {} : { payload: payload as object }) });

  /** success only with the contract's status (and a JSON body, or none for 204) */
  function outcome<T>(res: LightMyRequestResponse, status: number, check: (body: unknown) => boolean): Outcome<T> {
    if (res.statusCode >= 400) return restFailure(res);
    const body = parse(res);
    const shapeOk = status === 204 ? res.body === '' : res.headers['content-type'] === JSON_TYPE && check(body);
    if (res.statusCode !== status || !shapeOk) return { ok: false, code: `UNEXPECTED HTTP ${res.statusCode} (wanted ${status})`, res };
    return { ok: true, value: (status === 204 ? true : body) as T, res };
  }
  const isRecord = (b: unknown) => !!b && typeof b === 'object' && !Array.isArray(b) && 'id' in (b as object);

  return {
    transport: json ? 'rest.json' : 'rest',
    list: async () => outcome(await call('GET', `${API}${sfx}`), 200, Array.isArray),
    show: async (id) => outcome(await call('GET', `${API}/${id}${sfx}`), 200, isRecord),
    create: async (body) => outcome(await call('POST', `${API}${sfx}`, body), 201, isRecord),
    update: async (id, body) => outcome(await call('PUT', `${API}/${id}${sfx}`, body), 200, isRecord),
    delete: async (id) => outcome(await call('DELETE', `${API}/${id}${sfx}`), 204, () => true),
    async generateSecret(id, variant = 'id') {
      // generate_secret: Zendesk Support's PUT form (node-zendesk's generateSecret)
      const [method, path] = variant.startsWith('generate_secret')
        ? ['PUT' as const, `${API}/${id}/generate_secret${sfx}`]
        : ['POST' as const, variant.startsWith('client_secret') ? `${API}/${id}/client_secret${sfx}` : `${API}/${id}${sfx}`];
      const res = variant.endsWith('+empty-json') ? await call(method, path, '', { 'content-type': 'application/json' }) : await call(method, path);
      return outcome(res, 200, (b) => !!b && typeof b === 'object' && isDeepStrictEqual(Object.keys(b as object), ['client_secret']) && typeof (b as { client_secret: unknown }).client_secret === 'string');
    },
  };
}

// ---------------------------------------------------------------- GraphQL

const FIELDS = 'id name company clientIdentifier clientSecret clientType redirectUris scopes agentId createDate updateDate';
const Q = {
  list: `query { oauthClients { ${FIELDS} } }`,
  show: `query($id: ID!) { oauthClient(id: $id) { ${FIELDS} } }`,
  create: `mutation($input: OAuthClientInput!) { createOAuthClient(input: $input) { ${FIELDS} } }`,
  update: `mutation($id: ID!, $input: OAuthClientInput!) { updateOAuthClient(id: $id, input: $input) { ${FIELDS} } }`,
  delete: `mutation($id: ID!) { deleteOAuthClient(id: $id) }`,
  generate: `mutation($id: ID!) { generateOAuthClientSecret(id: $id) { ${FIELDS} } }`,
};

interface GqlClient {
  id: string;
  name: string;
  company: string | null;
  clientIdentifier: string;
  clientSecret: string;
  clientType: string;
  redirectUris: string[];
  scopes: string;
  agentId: string | null;
  createDate: string;
  updateDate: string | null;
}

/** ISO 8601 with seconds, as REST writes it (GraphQL's DateTimeISO carries milliseconds). */
export const toSeconds = (iso: string | null) => (iso === null ? null : new Date(iso).toISOString().replace(/\.\d{3}Z$/, 'Z'));

export function fromGraphQL(c: GqlClient): ClientJson {
  return {
    id: Number(c.id),
    name: c.name,
    company: c.company,
    client_identifier: c.clientIdentifier,
    client_secret: c.clientSecret,
    client_type: typeof c.clientType === 'string' ? c.clientType.toLowerCase() : c.clientType,
    redirect_uris: c.redirectUris.join(' '),
    scopes: c.scopes,
    agent_id: c.agentId === null ? null : Number(c.agentId),
    create_date: toSeconds(c.createDate)!,
    update_date: toSeconds(c.updateDate),
  };
}

/** A REST (snake_case) body as an OAuthClientInput; throws NotExpressible for what GraphQL cannot carry. */
export function toGraphQLInput(body: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const str = (k: string, v: unknown) => {
    if (v !== null && typeof v !== 'string') throw new NotExpressible(`${k}: ${JSON.stringify(v)}`);
    return v;
  };
  for (const [key, value] of Object.entries(body)) {
    switch (key) {
      case 'name':
      case 'company':
      case 'scopes':
        input[key] = str(key, value);
        break;
      case 'client_type':
        if (value === null) input.clientType = null;
        else if (value === 'public' || value === 'confidential') input.clientType = value.toUpperCase();
        else throw new NotExpressible(`client_type: ${JSON.stringify(value)}`);
        break;
      case 'redirect_uris':
        if (value === null || typeof value === 'string') input.redirectUris = value === null ? null : [value];
        else if (Array.isArray(value) && value.every((u) => typeof u === 'string')) input.redirectUris = value;
        else throw new NotExpressible(`redirect_uris: ${JSON.stringify(value)}`);
        break;
      default:
        throw new NotExpressible(`field ${key}`);
    }
  }
  return input;
}

function graphqlDriver(ctx: TestContext, auth?: string): ClientsDriver {
  const headers: Record<string, string> = auth ? { authorization: auth } : {};

  async function run<T>(query: string, variables: Record<string, unknown>, pick: (data: Record<string, unknown>) => unknown, nullable = false): Promise<Outcome<T>> {
    const res = await ctx.graphql(query, variables, headers);
    const body = parse(res) as { data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string; details?: unknown } }[] } | undefined;
    if (!body) return { ok: false, code: `UNEXPECTED HTTP ${res.statusCode}`, res };
    if (body.errors?.length) {
      const ext = body.errors[0].extensions ?? {};
      const code = ext.code ?? 'NO CODE';
      if (code === 'BAD_USER_INPUT') {
        return wellFormedDetails(ext.details)
          ? { ok: false, code, details: ext.details, fields: fieldsOf(ext.details), res }
          : { ok: false, code: 'BAD_USER_INPUT WITHOUT details', res };
      }
      return { ok: false, code, res };
    }
    const value = body.data ? pick(body.data) : undefined;
    if (value === null && nullable) return { ok: false, code: 'NOT_FOUND', nullResult: true, res };
    if (value === null || value === undefined || res.statusCode !== 200) return { ok: false, code: `UNEXPECTED HTTP ${res.statusCode}`, res };
    return { ok: true, value: value as T, res };
  }
  const one = (key: string) => (d: Record<string, unknown>) => (d[key] ? fromGraphQL(d[key] as GqlClient) : d[key]);

  return {
    transport: 'graphql',
    list: () => run(Q.list, {}, (d) => (Array.isArray(d.oauthClients) ? (d.oauthClients as GqlClient[]).map(fromGraphQL) : d.oauthClients)),
    show: (id) => run(Q.show, { id: String(id) }, one('oauthClient'), true),
    create: (body) => run(Q.create, { input: toGraphQLInput(body) }, one('createOAuthClient')),
    update: (id, body) => run(Q.update, { id: String(id), input: toGraphQLInput(body) }, one('updateOAuthClient')),
    delete: (id) => run(Q.delete, { id: String(id) }, (d) => (d.deleteOAuthClient === true ? true : null)),
    generateSecret: (id) =>
      run(Q.generate, { id: String(id) }, (d) => {
        const c = d.generateOAuthClientSecret as GqlClient | null;
        return c && { client_secret: c.clientSecret };
      }),
  };
}

// ---------------------------------------------------------------- tokens of a given client

/** Issues a token for an existing client straight into the database, hashed as the service stores tokens. */
export async function insertTokenForClient(
  ctx: TestContext,
  user: TestUser,
  clientId: bigint | number,
  scopes: string[] = ['read', 'write'],
): Promise<{ token: string; id: bigint }> {
  const token = randomUrlSafe(32);
  const row = await ctx.db.prisma.oAuthToken.create({
    data: {
      accountId: user.accountId,
      clientId: BigInt(clientId),
      userId: user.id,
      tokenHash: hmacHex(TEST_HASH_KEY, token),
      tokenPrefix: token.slice(0, 10),
      scopes,
    },
  });
  return { token, id: row.id };
}

/** JSON of a database row, bigint-safe, for "the secret appears in no column" checks. */
export const rowJson = (row: unknown) => JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
