import type { ClientJson, ClientsDriver, DetailCode, Outcome, Transport } from './helpers/oauth-client-drivers';

// The one table of OAuth client cases (docs/api.md, "OAuth clients"). Every case
// runs through every transport of `transports` unless it is marked restOnly
// (a value GraphQL's input type cannot carry: a number for a string, an enum
// value outside PUBLIC/CONFIDENTIAL, unknown fields, the {"client": …} wrapper).

export const BOTH: Transport[] = ['rest', 'graphql'];
/** the lifecycle also runs over the `.json` variant of every REST route */
export const ALL: Transport[] = ['rest', 'rest.json', 'graphql'];

/** A valid create body, in REST's snake_case. */
export const VALID = {
  name: 'Zendesk Ticket App',
  company: 'Acme Inc',
  scopes: 'read write',
  redirect_uris: 'https://app.example.com/oauth/cb',
} as const;

export type Expect =
  /** success: these fields of the returned (and re-read) record */
  | { ok: Partial<ClientJson> }
  /** 422: exactly these fields, each with (one of) these detail codes */
  | { invalid: Record<string, DetailCode | DetailCode[]> };

export interface BodyCase {
  title: string;
  body: Record<string, unknown>;
  restOnly?: boolean;
  expect: Expect;
}

const withField = (field: string, value: unknown): Record<string, unknown> => ({ ...VALID, [field]: value });
const without = (field: keyof typeof VALID): Record<string, unknown> => {
  const { [field]: _omit, ...rest } = VALID;
  return rest;
};
const uri = (length: number) => {
  const head = 'https://app.example.com/';
  return head + 'a'.repeat(length - head.length);
};
const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://app${i + 1}.example.com/cb`);

export const CREATE_CASES: BodyCase[] = [
  // name: required, 1..255 after trimming
  { title: 'name missing', body: without('name'), expect: { invalid: { name: 'BlankValue' } } },
  { title: 'name null', body: withField('name', null), expect: { invalid: { name: 'BlankValue' } } },
  { title: 'name ""', body: withField('name', ''), expect: { invalid: { name: 'BlankValue' } } },
  { title: 'name "   "', body: withField('name', '   '), expect: { invalid: { name: 'BlankValue' } } },
  { title: 'name of 255 characters', body: withField('name', 'n'.repeat(255)), expect: { ok: { name: 'n'.repeat(255) } } },
  { title: 'name of 256 characters', body: withField('name', 'n'.repeat(256)), expect: { invalid: { name: 'TooLong' } } },
  { title: 'name 123 (not a string)', body: withField('name', 123), restOnly: true, expect: { invalid: { name: 'InvalidValue' } } },

  // company: optional, ≤ 255
  { title: 'company missing', body: without('company'), expect: { ok: { company: null } } },
  { title: 'company of 255 characters', body: withField('company', 'c'.repeat(255)), expect: { ok: { company: 'c'.repeat(255) } } },
  { title: 'company of 256 characters', body: withField('company', 'c'.repeat(256)), expect: { invalid: { company: 'TooLong' } } },
  { title: 'company 123 (not a string)', body: withField('company', 123), restOnly: true, expect: { invalid: { company: 'InvalidValue' } } },

  // client_type: public (default) | confidential
  { title: 'client_type missing → public', body: { ...VALID }, expect: { ok: { client_type: 'public' } } },
  { title: 'client_type "public"', body: withField('client_type', 'public'), expect: { ok: { client_type: 'public' } } },
  { title: 'client_type "confidential"', body: withField('client_type', 'confidential'), expect: { ok: { client_type: 'confidential' } } },
  { title: 'client_type "other"', body: withField('client_type', 'other'), restOnly: true, expect: { invalid: { client_type: 'InvalidValue' } } },
  { title: 'client_type "PUBLIC" (REST values are lower-case)', body: withField('client_type', 'PUBLIC'), restOnly: true, expect: { invalid: { client_type: 'InvalidValue' } } },

  // scopes: exactly read | write | read write | write read, stored normalized
  { title: 'scopes "read"', body: withField('scopes', 'read'), expect: { ok: { scopes: 'read' } } },
  { title: 'scopes "write"', body: withField('scopes', 'write'), expect: { ok: { scopes: 'write' } } },
  { title: 'scopes "read write"', body: withField('scopes', 'read write'), expect: { ok: { scopes: 'read write' } } },
  { title: 'scopes "write read" → "read write"', body: withField('scopes', 'write read'), expect: { ok: { scopes: 'read write' } } },
  { title: 'scopes "read\\twrite" → "read write"', body: withField('scopes', 'read\twrite'), expect: { ok: { scopes: 'read write' } } },
  { title: 'scopes " write \\n read " → "read write"', body: withField('scopes', ' write \n read '), expect: { ok: { scopes: 'read write' } } },
  { title: 'scopes missing', body: without('scopes'), expect: { invalid: { scopes: 'BlankValue' } } },
  { title: 'scopes ""', body: withField('scopes', ''), expect: { invalid: { scopes: 'BlankValue' } } },
  { title: 'scopes "admin"', body: withField('scopes', 'admin'), expect: { invalid: { scopes: 'InvalidValue' } } },
  { title: 'scopes "Read" (case matters)', body: withField('scopes', 'Read'), expect: { invalid: { scopes: 'InvalidValue' } } },
  { title: 'scopes "read read"', body: withField('scopes', 'read read'), expect: { invalid: { scopes: 'InvalidValue' } } },
  { title: 'scopes "read write delete"', body: withField('scopes', 'read write delete'), expect: { invalid: { scopes: 'InvalidValue' } } },
  { title: 'scopes "tickets:read" (a token scope, not a client scope)', body: withField('scopes', 'tickets:read'), expect: { invalid: { scopes: 'InvalidValue' } } },
  { title: 'scopes ["read"] (not a string)', body: withField('scopes', ['read']), restOnly: true, expect: { invalid: { scopes: 'InvalidValue' } } },

  // redirect_uris: required; a string of whitespace-separated URIs or an array of strings
  { title: 'redirect_uris: a string with one URI', body: withField('redirect_uris', 'https://a.example.com/cb'), expect: { ok: { redirect_uris: 'https://a.example.com/cb' } } },
  {
    title: 'redirect_uris: a string with several URIs separated by any whitespace',
    body: withField('redirect_uris', ' https://a.example.com/cb   https://b.example.com/cb\n\thttp://localhost:3000/cb '),
    expect: { ok: { redirect_uris: 'https://a.example.com/cb https://b.example.com/cb http://localhost:3000/cb' } },
  },
  {
    title: 'redirect_uris: an array of strings',
    body: withField('redirect_uris', ['https://a.example.com/cb', 'https://b.example.com/cb?x=1']),
    expect: { ok: { redirect_uris: 'https://a.example.com/cb https://b.example.com/cb?x=1' } },
  },
  { title: 'redirect_uris: http://localhost:8080/cb', body: withField('redirect_uris', 'http://localhost:8080/cb'), expect: { ok: { redirect_uris: 'http://localhost:8080/cb' } } },
  { title: 'redirect_uris: http://127.0.0.1/cb', body: withField('redirect_uris', 'http://127.0.0.1/cb'), expect: { ok: { redirect_uris: 'http://127.0.0.1/cb' } } },
  { title: 'redirect_uris: http://[::1]/cb', body: withField('redirect_uris', 'http://[::1]/cb'), expect: { ok: { redirect_uris: 'http://[::1]/cb' } } },
  { title: 'redirect_uris: custom scheme com.example.app:/cb', body: withField('redirect_uris', 'com.example.app:/cb'), expect: { ok: { redirect_uris: 'com.example.app:/cb' } } },
  { title: 'redirect_uris: one URI of 2000 characters', body: withField('redirect_uris', uri(2000)), expect: { ok: { redirect_uris: uri(2000) } } },
  { title: 'redirect_uris: 20 URIs', body: withField('redirect_uris', uris(20)), expect: { ok: { redirect_uris: uris(20).join(' ') } } },
  { title: 'redirect_uris: http://example.com/cb (http off loopback)', body: withField('redirect_uris', 'http://example.com/cb'), expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'redirect_uris: http://localhost.evil.com/cb', body: withField('redirect_uris', 'http://localhost.evil.com/cb'), expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'redirect_uris: javascript:alert(1)', body: withField('redirect_uris', 'javascript:alert(1)'), expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'redirect_uris: a fragment https://a.com/cb#x', body: withField('redirect_uris', 'https://a.com/cb#x'), expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'redirect_uris: a wildcard https://*.a.com', body: withField('redirect_uris', 'https://*.a.com'), expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'redirect_uris: relative /cb', body: withField('redirect_uris', '/cb'), expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'redirect_uris: one good and one bad URI', body: withField('redirect_uris', 'https://a.example.com/cb http://example.com/cb'), expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'redirect_uris: one URI of 2001 characters', body: withField('redirect_uris', uri(2001)), expect: { invalid: { redirect_uris: ['InvalidValue', 'TooLong'] } } },
  { title: 'redirect_uris: 21 URIs (array)', body: withField('redirect_uris', uris(21)), expect: { invalid: { redirect_uris: ['InvalidValue', 'TooLong'] } } },
  { title: 'redirect_uris: 21 URIs (one string)', body: withField('redirect_uris', uris(21).join(' ')), expect: { invalid: { redirect_uris: ['InvalidValue', 'TooLong'] } } },
  { title: 'redirect_uris missing', body: without('redirect_uris'), expect: { invalid: { redirect_uris: 'BlankValue' } } },
  { title: 'redirect_uris null', body: withField('redirect_uris', null), expect: { invalid: { redirect_uris: 'BlankValue' } } },
  { title: 'redirect_uris []', body: withField('redirect_uris', []), expect: { invalid: { redirect_uris: 'BlankValue' } } },
  { title: 'redirect_uris ""', body: withField('redirect_uris', ''), expect: { invalid: { redirect_uris: 'BlankValue' } } },
  { title: 'redirect_uris "  \\n "', body: withField('redirect_uris', '  \n '), expect: { invalid: { redirect_uris: 'BlankValue' } } },
  { title: 'redirect_uris [1, 2]', body: withField('redirect_uris', [1, 2]), restOnly: true, expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'redirect_uris 42', body: withField('redirect_uris', 42), restOnly: true, expect: { invalid: { redirect_uris: 'InvalidValue' } } },

  // several problems at once are all reported
  { title: 'empty body: every required field', body: {}, expect: { invalid: { name: 'BlankValue', scopes: 'BlankValue', redirect_uris: 'BlankValue' } } },
  {
    title: 'several invalid fields together',
    body: { name: 'n'.repeat(256), scopes: 'admin', redirect_uris: 'http://example.com/cb' },
    expect: { invalid: { name: 'TooLong', scopes: 'InvalidValue', redirect_uris: 'InvalidValue' } },
  },

  // body forms (REST)
  {
    title: 'body wrapped as {"client": {...}}',
    body: { client: { ...VALID, client_type: 'confidential', scopes: 'write' } },
    restOnly: true,
    expect: { ok: { name: VALID.name, company: VALID.company, client_type: 'confidential', scopes: 'write', redirect_uris: VALID.redirect_uris } },
  },
  {
    title: 'wrapped body validated like a flat one',
    body: { client: { ...VALID, name: '' } },
    restOnly: true,
    expect: { invalid: { name: 'BlankValue' } },
  },
];

/** Applied to a fresh client created from VALID (update is partial: omitted fields keep their value). */
export const UPDATE_CASES: BodyCase[] = [
  { title: 'only name', body: { name: 'Renamed' }, expect: { ok: { name: 'Renamed' } } },
  { title: 'empty body (nothing changes but update_date)', body: {}, expect: { ok: {} } },
  { title: 'company', body: { company: 'Other Co' }, expect: { ok: { company: 'Other Co' } } },
  { title: 'client_type confidential', body: { client_type: 'confidential' }, expect: { ok: { client_type: 'confidential' } } },
  { title: 'scopes "write read" → "read write"', body: { scopes: 'write read' }, expect: { ok: { scopes: 'read write' } } },
  { title: 'scopes "read"', body: { scopes: 'read' }, expect: { ok: { scopes: 'read' } } },
  { title: 'redirect_uris as an array', body: { redirect_uris: ['https://x.example.com/a', 'com.example.app:/cb'] }, expect: { ok: { redirect_uris: 'https://x.example.com/a com.example.app:/cb' } } },
  { title: 'name ""', body: { name: '' }, expect: { invalid: { name: 'BlankValue' } } },
  { title: 'name "   "', body: { name: '   ' }, expect: { invalid: { name: 'BlankValue' } } },
  { title: 'name null', body: { name: null }, expect: { invalid: { name: 'BlankValue' } } },
  { title: 'name of 256 characters', body: { name: 'n'.repeat(256) }, expect: { invalid: { name: 'TooLong' } } },
  { title: 'company of 256 characters', body: { company: 'c'.repeat(256) }, expect: { invalid: { company: 'TooLong' } } },
  { title: 'scopes ""', body: { scopes: '' }, expect: { invalid: { scopes: 'BlankValue' } } },
  { title: 'scopes "admin"', body: { scopes: 'admin' }, expect: { invalid: { scopes: 'InvalidValue' } } },
  { title: 'redirect_uris []', body: { redirect_uris: [] }, expect: { invalid: { redirect_uris: 'BlankValue' } } },
  { title: 'redirect_uris http://example.com/cb', body: { redirect_uris: 'http://example.com/cb' }, expect: { invalid: { redirect_uris: 'InvalidValue' } } },
  { title: 'a valid name with an invalid scope changes nothing', body: { name: 'Fine', scopes: 'admin' }, expect: { invalid: { scopes: 'InvalidValue' } } },
  { title: 'client_type "other"', body: { client_type: 'other' }, restOnly: true, expect: { invalid: { client_type: 'InvalidValue' } } },
  { title: 'name 123', body: { name: 123 }, restOnly: true, expect: { invalid: { name: 'InvalidValue' } } },
  { title: 'body wrapped as {"client": {"name": …}}', body: { client: { name: 'Wrapped' } }, restOnly: true, expect: { ok: { name: 'Wrapped' } } },
  { title: 'wrapped {"client": {"name": ""}}', body: { client: { name: '' } }, restOnly: true, expect: { invalid: { name: 'BlankValue' } } },
];

/** Read-only and unknown fields a client may send: all ignored, never stored. */
export const IGNORED_FIELDS = {
  id: 987654,
  client_identifier: 'chosen-by-the-caller-chosen-by-the-caller-0001',
  client_secret: 'chosen-secret-chosen-secret-chosen-secret-0001',
  agent_id: 123456,
  create_date: '2001-01-01T00:00:00Z',
  update_date: '2001-01-02T00:00:00Z',
  foo: 'bar',
};

/** Path ids that are not positive integers: 404 on REST, null / NOT_FOUND on GraphQL (never 400 or 500). */
export const BAD_IDS = ['abc', '0', '-1', '1.5', '99999999999999999999999', '1e3', '9223372036854775808'];

/** Every route that addresses one client, for the role, tenancy and bad-id tables. */
export interface IdRoute {
  title: string;
  /** the route is a read (GET / GraphQL query): its "not found" is GraphQL null */
  read: boolean;
  call: (d: ClientsDriver, id: string | number) => Promise<Outcome<unknown>>;
}
export const ID_ROUTES: IdRoute[] = [
  { title: 'show', read: true, call: (d, id) => d.show(id) },
  { title: 'update', read: false, call: (d, id) => d.update(id, { name: 'Hijacked' }) },
  { title: 'generate secret (POST /{id})', read: false, call: (d, id) => d.generateSecret(id, 'id') },
  { title: 'generate secret (POST /{id}/client_secret)', read: false, call: (d, id) => d.generateSecret(id, 'client_secret') },
  { title: 'generate secret (PUT /{id}/generate_secret)', read: false, call: (d, id) => d.generateSecret(id, 'generate_secret') },
  { title: 'delete', read: false, call: (d, id) => d.delete(id) },
];

/** Every route, for the role table. */
export interface AnyRoute {
  title: string;
  write: boolean;
  call: (d: ClientsDriver, id: number) => Promise<Outcome<unknown>>;
}
export const ALL_ROUTES: AnyRoute[] = [
  { title: 'list', write: false, call: (d) => d.list() },
  { title: 'create', write: true, call: (d) => d.create({ ...VALID }) },
  ...ID_ROUTES.map((r) => ({ title: r.title, write: !r.read, call: r.call })),
];
