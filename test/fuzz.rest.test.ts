import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { restRoutes } from '../src/rest/routes';
import {
  createFuzzFixture,
  directorySpecs, webhookSpec,
  deepArray,
  deepObject,
  describeResponse,
  expectNothingWrittenOrLogged,
  DupObject,
  envelopeProblems,
  forbiddenEverywhere,
  hostileJson,
  hostileNumber,
  hostileString,
  invalidIdSegment,
  invalidIdValue,
  invalidObject,
  JUST_OVER_LIMIT_BODY,
  ONE_MB_STRING_BODY,
  pollutingBody,
  RawJson,
  runs,
  scopeMismatch,
  Sender,
  toJson,
  unauthenticated,
  pct,
  validObject,
  type FuzzFixture,
  type ObjectSpec,
} from './helpers/fuzz';

// Issue 7 item 1, REST half: hostile requests against every route of
// src/rest/routes.ts (and its .json twin) never get a 5xx. Each property builds
// requests that are invalid by construction — bad credentials, ids that are not
// a live id of the caller's account, bodies that are not a JSON object, fields
// with wrong values — and requires a 4xx in Zendesk's envelope (docs/api.md, "Errors"),
// the exact status where the contract names one, nothing internal in the body,
// nothing logged at error level, and the database exactly as it was.

// Each property loops over every operation (route): its time grows with the API, and a
// full parallel run on 2 cores roughly doubles it.
jest.setTimeout(300_000);

interface Target {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** path under /api/v2 as declared, e.g. /oauth/clients/:id */
  template: string;
  json: boolean;
  /** "POST /oauth/clients" */
  key: string;
}

const TARGETS: Target[] = restRoutes.flatMap((r) =>
  r.paths.flatMap((template) => [false, true].map((json) => ({ method: r.method, template, json, key: `${r.method} ${template}` }))),
);
const hasId = (t: Target) => t.template.includes(':id');
/** A token may always show and revoke itself: scopes do not apply to …/current (docs/api.md, "Scopes and roles"). */
const isSelf = (t: Target) => t.template.endsWith('/current');
const urlOf = (t: Target, id?: string, query = '') => `/api/v2${t.template.replace(':id', id ?? '')}${t.json ? '.json' : ''}${query}`;

interface BodySpec {
  /** the key of the Support-API style wrapper: {"client": {...}} */
  wrapper: string;
  fields: ObjectSpec;
}

/** Wrong JSON types for a field: arrays where objects belong, objects where strings belong … */
const notAString = fc.oneof(hostileNumber, fc.constantFrom<unknown>(true, false, [], {}, ['read'], { value: 'x' }), fc.array(hostileString, { minLength: 1, maxLength: 2 }), fc.constant(deepObject(2000)));
/** Never a positive integer, nor a string of digits (POST /oauth/tokens reads "12" as 12). */
const notAnInteger = fc.oneof(
  // judged by the value the server parses: the literals 1.0 and 1E3 are the integers 1 and 1000
  hostileNumber.filter((n) => {
    const value = n instanceof RawJson ? JSON.parse(n.text) : n;
    return !(typeof value === 'number' && Number.isSafeInteger(value) && value > 0);
  }),
  fc.constantFrom<unknown>(true, [], {}, [1], { id: 1 }, '0x1', '1e3', '-1', '1.0'),
  hostileString.filter((s) => !/^\d+$/.test(s)),
);

/**
 * What each route does with a body (keyed "METHOD template"). `ignored`: the
 * route reads no field, so only bodies that are not a JSON object are wrong.
 * A route missing here fails the first test: classify it when adding it.
 */
function bodySpecs(fx: FuzzFixture): Record<string, BodySpec | 'ignored'> {
  const clientFields: ObjectSpec = {
    name: { required: true, valid: fc.constantFrom('fuzz app', ' trimmed '), invalid: fc.oneof(notAString, fc.constantFrom(null, '', '   ', 'x'.repeat(256), 'a\u0000b')) },
    company: { valid: fc.constantFrom(null, 'ACME'), invalid: fc.oneof(notAString.filter((v) => v !== null), fc.constantFrom('c'.repeat(256), '\u0000')) },
    client_type: { valid: fc.constantFrom('public', 'confidential'), invalid: fc.oneof(fc.constantFrom('PUBLIC', 'private', '', ' public'), notAString, hostileString.filter((s) => s !== 'public' && s !== 'confidential')) },
    scopes: { required: true, valid: fc.constantFrom('read', 'read write'), invalid: fc.oneof(notAString, fc.constantFrom(null, '', 'admin', 'read,write', 'read read', 'read\u0000')) },
    redirect_uris: {
      required: true,
      valid: fc.constantFrom('https://app.example.com/cb', ['https://app.example.com/cb', 'com.example.app:/cb'], 'http://localhost/a http://127.0.0.1/b'),
      invalid: fc.oneof(
        fc.constantFrom<unknown>(null, '', [], [''], 5, {}, [1], [null], [['https://a.example/cb']], { uri: 'https://a.example/cb' }, 'http://example.com/cb', 'https://a.example/#f', 'javascript:alert(1)', 'https://a.example/\u0000'),
        fc.constant(Array.from({ length: 21 }, (_, i) => `https://a${i}.example/cb`)),
        fc.constant(deepArray(5000)),
      ),
    },
    // Zendesk Support's names (kind and redirect_uri are left out: with client_type / redirect_uris they are refused as the same field twice)
    identifier: { valid: fc.uuid(), invalid: notAString.filter((v) => v !== null) },
    description: { valid: fc.constantFrom(null, '', 'What the app does'), invalid: fc.oneof(notAString.filter((v) => v !== null), fc.constantFrom('d'.repeat(1025), 'a\u0000b')) },
    logo_url: {
      valid: fc.constantFrom(null, '', 'https://cdn.example.com/logo.png', 'http://localhost:3000/logo.png'),
      invalid: fc.oneof(
        notAString.filter((v) => v !== null),
        fc.constantFrom('http://example.com/logo.png', 'javascript:alert(1)', 'ftp://a.example/l.png', 'logo.png', 'https://a.example/\u0000', 'https://u@a.example/l.png', `https://a.example/${'x'.repeat(2048)}`),
      ),
    },
  };
  const tokenFields: ObjectSpec = {
    client_id: {
      required: true,
      valid: fc.constantFrom<unknown>(Number(fx.ids.client), fx.ids.client),
      invalid: fc.oneof(notAnInteger, fc.constantFrom<unknown>(Number(fx.ids.otherClient), fx.ids.otherClient, 99999999, '9999999999999999999'), invalidIdValue(fx.ids.otherClient)),
    },
    scopes: {
      required: true,
      valid: fc.constantFrom(['read'], ['read', 'write'], ['tickets:delete']),
      invalid: fc.constantFrom<unknown>(null, 'read', 'read write', [], [1], [null], [['read']], {}, { 0: 'read' }, Array.from({ length: 51 }, () => 'read'), ['r'.repeat(101)], ['read\u0000'], deepArray(3000)),
    },
  };
  const callbackFields: ObjectSpec = {
    phone_number_id: {
      required: true,
      valid: fc.constant(Number(fx.ids.phoneNumber)),
      invalid: fc.oneof(notAnInteger, fc.constantFrom<unknown>(null, fx.ids.phoneNumber, Number(fx.ids.otherPhoneNumber), 99999999)),
    },
    requester_phone_number: {
      required: true,
      valid: fc.constantFrom('+12518717081', ' +14155552671 '),
      invalid: fc.oneof(fc.constantFrom<unknown>(null, '', '123', '+1', '12518717081', '+1 251 871 7081', '+999999999999999', '+1251871708\u0000', 12518717081, ['+12518717081']), notAString.filter((v) => v !== null)),
    },
    group_ids: {
      valid: fc.constantFrom<unknown>([], [Number(fx.ids.group)], null),
      invalid: fc.oneof(
        fc.constantFrom<unknown>(Number(fx.ids.group), fx.ids.group, [fx.ids.group], [0], [-1], [1.5], [Number(fx.ids.otherGroup)], [99999999], {}, 'all', [[1]], Array.from({ length: 101 }, () => Number(fx.ids.group))),
        fc.array(notAnInteger, { minLength: 1, maxLength: 3 }),
      ),
    },
  };
  // The directory's fields, in REST names and JSON types (GraphQL enum names → Zendesk's values; JSON wrong types added)
  const dir = directorySpecs(fx);
  const snake = (spec: ObjectSpec, names: Record<string, string>, extra: Record<string, fc.Arbitrary<unknown>> = {}): ObjectSpec =>
    Object.fromEntries(Object.entries(names).map(([rest, gql]) => {
      const more = extra[rest];
      return [rest, { ...spec[gql], ...(more ? { invalid: fc.oneof(spec[gql].invalid, more) } : {}) }];
    }));
  const lower = (a: fc.Arbitrary<unknown>) => a.map((v) => (typeof v === 'string' ? v.toLowerCase() : v));
  const lowerSpec = (f: ObjectSpec[string]) => ({ ...f, valid: lower(f.valid) });
  const notABoolean = fc.constantFrom<unknown>('true', 'yes', 1, 0, [], {}, [true]);
  const createUser = snake(dir.CreateUserInput, { name: 'name', email: 'email', role: 'role', password: 'password' }, {
    name: notAString.filter((v) => v !== null), email: notAString.filter((v) => v !== null), role: fc.oneof(fc.constantFrom('ADMIN', 'Agent', ''), notAString.filter((v) => v !== null)),
    password: notAString.filter((v) => v !== null),
  });
  createUser.role = { ...createUser.role, valid: lower(dir.CreateUserInput.role.valid) };
  const updateUser = snake(dir.UpdateUserInput, { name: 'name', email: 'email', role: 'role', active: 'active' }, {
    name: notAString, email: notAString, role: fc.oneof(fc.constantFrom('ADMIN', 'Agent', ''), notAString), active: notABoolean,
  });
  updateUser.role = { ...updateUser.role, valid: lower(dir.UpdateUserInput.role.valid) };
  const passwordFields: ObjectSpec = {
    password: { required: true, valid: fc.constant('a new password 1'), invalid: fc.oneof(fc.constantFrom(null, '', 'short', 'p'.repeat(1025)), notAString) },
    // an admin setting another user's password: the previous one is not asked for, but must be a string when given
    previous_password: { valid: fc.constantFrom(null, 'whatever it was'), invalid: notAString.filter((v) => v !== null) },
  };
  const groupFields = snake(dir.GroupInput, { name: 'name', description: 'description' }, { name: notAString, description: notAString.filter((v) => v !== null) });
  const notFlags = fc.constantFrom<unknown>('all', [true], 5, true, { voice: 'on' }, { sms: 1 }, { mms: [] });
  const phoneFields = { nickname: 'nickname', callback_enabled: 'callbackEnabled', capabilities: 'capabilities' };
  const phoneExtra = { nickname: notAString.filter((v) => v !== null), callback_enabled: notABoolean, capabilities: notFlags };
  const createPhone = snake(dir.PhoneNumberInput, { number: 'number', ...phoneFields }, { number: notAString, ...phoneExtra });
  const updatePhone = snake(dir.UpdatePhoneNumberInput, phoneFields, phoneExtra);
  const hook = webhookSpec();
  const webhookFields = snake(hook, { name: 'name', description: 'description', endpoint: 'endpoint', http_method: 'httpMethod', request_format: 'requestFormat', status: 'status', subscriptions: 'subscriptions' }, {
    name: notAString, description: notAString.filter((v) => v !== null), endpoint: notAString, http_method: fc.oneof(fc.constantFrom('post', 'TRACE', ''), notAString),
    request_format: fc.oneof(fc.constantFrom('JSON', 'xml', ''), notAString), status: fc.oneof(fc.constantFrom('ACTIVE', 'on', ''), notAString),
    subscriptions: fc.constantFrom<unknown>('zen:event-type:user.created', [1], [null], {}, [['x']]),
  });
  webhookFields.request_format = { ...webhookFields.request_format, valid: lower(hook.requestFormat.valid) };
  webhookFields.status = { ...webhookFields.status, valid: lower(hook.status.valid) };
  const membershipFields: ObjectSpec = {
    user_id: {
      required: true,
      valid: fc.constant(Number(fx.ids.user)),
      invalid: fc.oneof(notAnInteger, fc.constantFrom<unknown>(null, fx.ids.user, Number(fx.ids.otherUser), 99999999)),
    },
    group_id: {
      required: true,
      valid: fc.constant(Number(fx.ids.group)),
      invalid: fc.oneof(notAnInteger, fc.constantFrom<unknown>(null, fx.ids.group, Number(fx.ids.otherGroup), 99999999)),
    },
  };
  const notAWholeNumber = fc.constantFrom<unknown>('30', 1.5, true, [], {}, [30]);
  const settingsFields = snake(
    dir.AccountSettingsInput,
    { omnichannel_routing: 'omnichannelRouting', callback_offer_timeout: 'callbackOfferTimeout', callback_retry_delay: 'callbackRetryDelay', callback_max_attempts: 'callbackMaxAttempts', wrap_up_time: 'wrapUpTime' },
    { omnichannel_routing: notABoolean, callback_offer_timeout: notAWholeNumber, callback_retry_delay: notAWholeNumber, callback_max_attempts: notAWholeNumber, wrap_up_time: notAWholeNumber },
  );
  const availabilityFields: ObjectSpec = {
    agent_state: { ...lowerSpec(dir.AgentAvailabilityInput.agentState), invalid: fc.oneof(dir.AgentAvailabilityInput.agentState.invalid.filter((v) => v !== 'online'), fc.constantFrom<unknown>('ONLINE', 1, [], {})) },
    via: { ...lowerSpec(dir.AgentAvailabilityInput.via), invalid: fc.constantFrom<unknown>('SKYPE', 'CLIENT', 1, []) },
  };
  const outcomeFields: ObjectSpec = {
    outcome: { required: true, valid: fc.constantFrom('answered', 'no_answer', 'busy', 'failed'), invalid: fc.constantFrom<unknown>(null, '', 'ANSWERED', 'maybe', 1, [], {}) },
  };
  return {
    'POST /users': { wrapper: 'user', fields: createUser },
    'PUT /users/:id': { wrapper: 'user', fields: updateUser },
    'DELETE /users/:id': 'ignored',
    'PUT /users/:id/password': { wrapper: 'user', fields: passwordFields },
    'POST /users/:id/password': { wrapper: 'user', fields: passwordFields },
    'POST /groups': { wrapper: 'group', fields: groupFields },
    'PUT /groups/:id': { wrapper: 'group', fields: groupFields },
    'DELETE /groups/:id': 'ignored',
    'POST /group_memberships': { wrapper: 'group_membership', fields: membershipFields },
    'DELETE /group_memberships/:id': 'ignored',
    'POST /channels/voice/phone_numbers': { wrapper: 'phone_number', fields: createPhone },
    'PUT /channels/voice/phone_numbers/:id': { wrapper: 'phone_number', fields: updatePhone },
    'DELETE /channels/voice/phone_numbers/:id': 'ignored',
    'PUT /account/settings': { wrapper: 'settings', fields: settingsFields },
    'POST /oauth/clients': { wrapper: 'client', fields: clientFields },
    'PUT /oauth/clients/:id': { wrapper: 'client', fields: clientFields },
    'DELETE /oauth/clients/:id': 'ignored',
    'POST /oauth/clients/:id': 'ignored',
    'POST /oauth/clients/:id/client_secret': 'ignored',
    'PUT /oauth/clients/:id/generate_secret': 'ignored',
    'POST /oauth/tokens': { wrapper: 'token', fields: tokenFields },
    'DELETE /oauth/tokens/current': 'ignored',
    'DELETE /oauth/tokens/:id': 'ignored',
    'DELETE /users/me/oauth/grants/:id': 'ignored',
    'POST /channels/voice/callback_requests': { wrapper: 'callback_request', fields: callbackFields },
    'POST /channels/voice/callback_requests/:id/accept': 'ignored',
    'POST /channels/voice/callback_requests/:id/decline': 'ignored',
    // outcome is a flat body ({"outcome": …}); the wrapper form is accepted as any unknown field is: ignored
    'POST /channels/voice/callback_requests/:id/outcome': { wrapper: 'callback_request', fields: outcomeFields },
    'DELETE /channels/voice/callback_requests/:id': 'ignored',
    'PUT /channels/voice/availabilities/:id': { wrapper: 'availability', fields: availabilityFields },
    'POST /webhooks': { wrapper: 'webhook', fields: webhookFields },
    'PUT /webhooks/:id': { wrapper: 'webhook', fields: webhookFields },
    'PATCH /webhooks/:id': { wrapper: 'webhook', fields: webhookFields },
    'DELETE /webhooks/:id': 'ignored',
    'POST /webhooks/:id/signing_secret': 'ignored',
    'POST /webhooks/:id/test': 'ignored',
  };
}

/** The live record of the caller's account each :id route names, and another account's record of the same kind. */
function idsFor(t: Target, fx: FuzzFixture): { own: string; foreign: string } | undefined {
  if (t.template.startsWith('/oauth/clients/:id')) return { own: fx.ids.client, foreign: fx.ids.otherClient };
  if (t.template.startsWith('/oauth/tokens/:id')) return { own: fx.ids.token, foreign: fx.ids.otherToken };
  // your authorized apps: the admin's own token of no grant is an entry of theirs; another account's token is not
  if (t.template.startsWith('/users/me/oauth/grants/:id')) return { own: fx.ids.app, foreign: fx.ids.otherApp };
  if (t.template.startsWith('/audit_logs/:id')) return { own: fx.ids.auditLog, foreign: fx.ids.otherAuditLog };
  if (t.template.startsWith('/users/:id')) return { own: fx.ids.user, foreign: fx.ids.otherUser };
  if (t.template.startsWith('/groups/:id')) return { own: fx.ids.group, foreign: fx.ids.otherGroup };
  if (t.template.startsWith('/group_memberships/:id')) return { own: fx.ids.membership, foreign: fx.ids.otherMembership };
  if (t.template.startsWith('/webhooks/:id')) return { own: fx.ids.webhook, foreign: fx.ids.otherWebhook };
  if (t.template.startsWith('/channels/voice/phone_numbers/:id')) return { own: fx.ids.phoneNumber, foreign: fx.ids.otherPhoneNumber };
  if (t.template.startsWith('/channels/voice/callback_requests/:id')) return { own: fx.ids.callback, foreign: fx.ids.otherCallback };
  // the fixture's user is an agent of the account; the other account's admin is an agent of theirs
  if (t.template.startsWith('/channels/voice/availabilities/:id')) return { own: fx.ids.user, foreign: fx.ids.otherUser };
  return undefined;
}

/** A valid body for the route (or none), so that the one defect is the one the property adds. */
function validBody(spec: BodySpec | 'ignored' | undefined): fc.Arbitrary<string | undefined> {
  if (spec === undefined || spec === 'ignored') return fc.constantFrom(undefined, '{}');
  return fc.tuple(validObject(spec.fields), fc.boolean()).map(([fields, wrap]) => toJson(wrap ? { [spec.wrapper]: fields } : fields));
}

describe('REST fuzzing: hostile requests never get a 5xx (issue 7)', () => {
  let fx: FuzzFixture;
  let sender: Sender;
  let specs: Record<string, BodySpec | 'ignored'>;
  const started = Date.now();

  beforeAll(async () => {
    fx = await createFuzzFixture();
    sender = new Sender(fx.ctx);
    specs = bodySpecs(fx);
  });
  afterAll(() => fx.ctx.close());

  // After every property: nothing written, nothing logged at error level.
  expectNothingWrittenOrLogged(() => fx.ctx);

  /** Sends and throws (for fast-check to report, with its seed) unless the answer is a clean rejection. */
  async function expectRejected(opts: InjectOptions, statuses?: number[]) {
    const res = await sender.send(opts);
    const requestText = `${opts.url} ${JSON.stringify(opts.headers ?? {})} ${Buffer.isBuffer(opts.payload) ? opts.payload.toString('latin1') : String(opts.payload ?? '')}`;
    const problems = envelopeProblems(res, requestText, statuses);
    if (problems.length) throw new Error(`${opts.method} ${String(opts.url).slice(0, 300)}: ${problems.join('; ')}\n  answer: ${describeResponse(res)}`);
    return res;
  }

  const json = (authorization: string | undefined, extra: Record<string, string> = {}) => ({
    ...(authorization ? { authorization } : {}),
    'content-type': 'application/json',
    ...extra,
  });

  it('knows every route: each one that takes a body or an id is classified for the fuzzer', () => {
    expect(TARGETS.length).toBeGreaterThanOrEqual(2 * 14);
    for (const t of TARGETS) {
      if (t.method !== 'GET') expect([t.key, specs[t.key] !== undefined]).toEqual([t.key, true]);
      if (hasId(t)) expect([t.key, idsFor(t, fx) !== undefined]).toEqual([t.key, true]);
    }
  });

  it('refuses bad or insufficient credentials on every route with 401/403, even with a valid request behind them', async () => {
    for (const t of TARGETS) {
      const access = t.method === 'GET' ? 'read' : 'write';
      const faults = isSelf(t)
        ? fc.oneof(unauthenticated(fx), forbiddenEverywhere(fx))
        : fc.oneof(unauthenticated(fx), forbiddenEverywhere(fx), scopeMismatch(fx, access));
      const body = t.method === 'GET' ? fc.constant(undefined) : validBody(specs[t.key]);
      await fc.assert(
        fc.asyncProperty(fc.constant(t.key), faults, body, async (_route, fault, payload) => {
          // The live id of the caller's own record: a request that slipped through would act on it.
          const url = urlOf(t, idsFor(t, fx)?.own);
          const headers = payload === undefined ? fault.headers : { ...fault.headers, 'content-type': 'application/json' };
          await expectRejected({ method: t.method, url, headers, payload }, [fault.expect]);
        }),
        { numRuns: runs(38) },
      );
    }
  });

  it('answers 404 for every id that is not a live positive integer id of the caller\'s account', async () => {
    for (const t of TARGETS.filter(hasId)) {
      const { own, foreign } = idsFor(t, fx)!;
      await fc.assert(
        fc.asyncProperty(fc.constant(t.key), invalidIdSegment(own, foreign), validBody(specs[t.key]), async (_route, id, payload) => {
          const headers = payload === undefined ? { authorization: fx.auth.admin } : json(fx.auth.admin);
          await expectRejected({ method: t.method, url: urlOf(t, id.segment), headers, payload }, [404]);
        }),
        { numRuns: runs(100) },
      );
    }
  });

  /** Bodies that are not a JSON object in UTF-8: each with the status that docs/api.md, "Errors", gives it. */
  const brokenBody: fc.Arbitrary<{ kind: string; payload: string | Buffer; contentType?: string; status: number }> = fc.oneof(
    // Cut short: not JSON at all.
    fc.tuple(hostileJson, fc.nat()).map(([v, n]) => {
      const text = toJson({ name: v, scopes: 'read', redirect_uris: 'https://a.example/cb' });
      return { kind: 'truncated', payload: text.slice(0, 1 + (n % (text.length - 1))), status: 400 };
    }),
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => ({ kind: 'random bytes', payload: Buffer.from(bytes), status: 400 })),
    fc.constantFrom('{', '}', '{"a":}', '{"a" 1}', "{'a':1}", '{a:1}', '{"a":1,}', '[1,]', 'NaN', 'undefined', '{"a":01}', '{"a":"\\x41"}', '{"a":"\\u12"}', '{"a":"\u0001"}', '{"a":1}{"b":2}', '{"a":1} x', '\u0000', '/* c */ {}', '{"a":1e}')
      .map((payload) => ({ kind: 'not JSON', payload, status: 400 })),
    // JSON, but not an object: arrays where objects belong, scalars, deep nesting.
    fc.oneof(fc.array(hostileJson, { maxLength: 3 }), hostileNumber, hostileString, fc.constantFrom<unknown>(true, false, null, [{ name: 'x' }]), fc.constant(deepArray(10_000)))
      .map((v) => ({ kind: 'not an object', payload: toJson(v), status: 400 })),
    pollutingBody.map((payload) => ({ kind: 'prototype pollution', payload, status: 400 })),
    // An object, but not UTF-8: overlong, lone continuation, surrogate halves, truncated sequences.
    fc.tuple(fc.constantFrom([0xff], [0xfe, 0xff], [0xc0, 0xaf], [0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]), fc.nat(3)).map(([bytes, at]) => {
      const parts = ['{"name":"n', '","scopes":"read', '","redirect_uris":"https://a.example/cb', '","company":"c', '"}'];
      const chunks = parts.flatMap((p, i) => (i === at ? [Buffer.from(p), Buffer.from(bytes)] : [Buffer.from(p)]));
      return { kind: 'invalid UTF-8', payload: Buffer.concat(chunks), status: 400 };
    }),
    fc.constantFrom(ONE_MB_STRING_BODY, JUST_OVER_LIMIT_BODY).map((payload) => ({ kind: 'over 64 KiB', payload, status: 413 })),
    fc.tuple(fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'text/json', 'application/jsonx', 'application/json-patch+json', 'application/vnd.api+json', 'image/png', 'application/octet-stream'), fc.constantFrom('{}', '{"name":"x"}', 'name=x', '<a/>'))
      .map(([contentType, payload]) => ({ kind: 'not JSON content', payload, contentType, status: 415 })),
  );

  it('answers 400/413/415 for bodies that are not a JSON object, on every route that reads a body', async () => {
    const writes = TARGETS.filter((t) => t.method !== 'GET');
    for (const t of writes) {
      await fc.assert(
        fc.asyncProperty(fc.constant(t.key), brokenBody, fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON'), async (_route, body, jsonType) => {
          // Whitespace only counts as no body, and a JSON object parses: neither is a broken body.
          // (Bytes that are not UTF-8 are broken whatever they say.)
          const text = Buffer.isBuffer(body.payload) ? body.payload.toString('utf8') : body.payload;
          if (body.kind === 'random bytes' || body.kind === 'truncated') {
            let parsed: unknown;
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            const utf8 = Buffer.from(text, 'utf8').equals(Buffer.from(body.payload));
            fc.pre(!utf8 || (text.trim() !== '' && (parsed === undefined || parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))));
          }
          const url = urlOf(t, idsFor(t, fx)?.own);
          await expectRejected({ method: t.method, url, headers: { authorization: fx.auth.admin, 'content-type': body.contentType ?? jsonType }, payload: body.payload }, [body.status]);
        }),
        { numRuns: runs(60) },
      );
    }
  });

  it('answers 422 with details for objects with wrong field types or values, on every route with fields', async () => {
    const withFields = TARGETS.filter((t) => specs[t.key] !== undefined && specs[t.key] !== 'ignored');
    expect(withFields.length).toBeGreaterThanOrEqual(6);
    for (const t of withFields) {
      const spec = specs[t.key] as BodySpec;
      const names = Object.keys(spec.fields);
      const query = t.key === 'POST /oauth/tokens'
        ? fc.option(invalidIdValue(fx.ids.otherClient).map((v) => `?client_id=${pct(String(v))}`), { nil: '' })
        : fc.constantFrom('', '?name=x&scopes=read');
      await fc.assert(
        fc.asyncProperty(fc.constant(t.key), invalidObject(spec.fields, { reserved: [spec.wrapper] }), fc.constantFrom('flat', 'wrapped', 'wrapped+noise'), query, async (_route, { body }, shape, q) => {
          const wrapped = shape === 'flat' ? body : new DupObject([...(shape === 'wrapped+noise' ? [['id', 7] as [string, unknown]] : []), [spec.wrapper, body]]);
          const payload = toJson(wrapped);
          // Several long hostile values together may pass the 64 KiB limit: then 413 is the answer.
          const tooLarge = Buffer.byteLength(payload) > 64 * 1024;
          const res = await expectRejected({ method: t.method, url: urlOf(t, idsFor(t, fx)?.own, q), headers: json(fx.auth.admin), payload }, [tooLarge ? 413 : 422]);
          if (tooLarge) return;
          const fields = Object.keys(res.json().details);
          if (!fields.every((f) => names.includes(f))) throw new Error(`details name unknown fields: ${fields.join(', ')} (payload ${payload.slice(0, 300)})`);
        }),
        { numRuns: runs(170) },
      );
    }
  });

  it('answers 400 for bad pagination and filter parameters of GET /oauth/tokens', async () => {
    const targets = TARGETS.filter((t) => t.key === 'GET /oauth/tokens');
    expect(targets).toHaveLength(2);
    const notInt = fc.oneof(fc.constantFrom('abc', '1.5', '1e3', '0x10', '+', '--1', '1 ', '１', '9999999999', 'null', '[]', '\u0000'), hostileString.filter((s) => s !== '' && !/^-?\d{1,9}$/.test(s)));
    const nonPositive = fc.integer({ min: -999_999_999, max: 0 }).map(String);
    const cursor = fc.oneof(fc.constantFrom('x', 'MQ', 'MQ.', '.', 'MQ.AAAAAAAAAAAAAAAA', 'MQ.AAAAAAAAAAAAAAAA.x', 'LTE.abc', '%00'), hostileString.filter((s) => s !== ''));
    const badClient = fc.oneof(notInt, fc.constantFrom('-1', '1.0', '01x', '99999999999999999999')).filter((s) => !/^\d{1,19}$/.test(s));
    // Cursor mode when any page[...] parameter is present, offset mode otherwise (docs/api.md, "Pagination").
    const invalidQuery = fc.oneof(
      fc.record({ 'page[size]': fc.oneof(notInt, nonPositive) }),
      fc.record({ 'page[after]': cursor }),
      fc.record({ 'page[before]': cursor }),
      fc.record({ page: fc.oneof(notInt, nonPositive) }),
      fc.record({ per_page: fc.oneof(notInt, nonPositive) }),
      fc.tuple(fc.integer({ min: 101, max: 999_999_999 }), fc.integer({ min: 100, max: 999_999_999 })).map(([page, per]) => ({ page: String(page), per_page: String(per) })),
      fc.record({ client_id: badClient }),
    );
    const noise = fc.dictionary(fc.constantFrom('sort', 'x', 'include', 'page[size][]', 'per_page[]', 'q'), fc.string({ maxLength: 8 }), { maxKeys: 2 });
    for (const t of targets) {
      await fc.assert(
        fc.asyncProperty(invalidQuery, noise, fc.boolean(), async (bad, extra, repeat) => {
          const parts = Object.entries(bad).map(([k, v]) => `${pct(k)}=${v === '%00' ? v : pct(v)}`);
          // A repeated parameter: the first value is the one read, so the bad one goes first.
          if (repeat) parts.push(...Object.keys(bad).map((k) => `${pct(k)}=1`));
          parts.push(...Object.entries(extra).map(([k, v]) => `${pct(k)}=${pct(v)}`));
          await expectRejected({ method: 'GET', url: urlOf(t, undefined, `?${parts.join('&')}`), headers: { authorization: fx.auth.admin } }, [400]);
        }),
        { numRuns: runs(300) },
      );
    }
  });

  it('answers 404 RecordNotFound for methods a route does not have', async () => {
    const methodsOf = new Map<string, Set<string>>();
    for (const t of TARGETS) methodsOf.set(t.template, (methodsOf.get(t.template) ?? new Set()).add(t.method));
    const cases = [...methodsOf].flatMap(([template, methods]) =>
      (['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const).filter((m) => !methods.has(m)).map((method) => ({ template, method })),
    );
    expect(cases.length).toBeGreaterThan(5);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...cases), fc.boolean(), fc.constantFrom(undefined, '{}', '{"name":"x"}'), async ({ template, method }, jsonSuffix, body) => {
        const t: Target = { method: 'GET', template, json: jsonSuffix, key: template };
        const payload = method === 'GET' ? undefined : body;
        await expectRejected({ method, url: urlOf(t, idsFor(t, fx)?.own), headers: payload === undefined ? { authorization: fx.auth.admin } : json(fx.auth.admin), payload }, [404]);
      }),
      { numRuns: runs(200) },
    );
  });

  describe('regressions found by the fuzzer', () => {
    it('refuses a body that is not valid UTF-8 with 400 instead of storing replacement characters', async () => {
      const payload = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('","scopes":"read","redirect_uris":"https://a.example/cb"}')]);
      await expectRejected({ method: 'POST', url: '/api/v2/oauth/clients', headers: json(fx.auth.admin), payload }, [400]);
    });

    it.each([
      ['a client name', 'POST', '/api/v2/oauth/clients', { name: 'a\u0000b', scopes: 'read', redirect_uris: 'https://a.example/cb' }, 'name'],
      ['a company', 'POST', '/api/v2/oauth/clients', { name: 'ok', company: '\u0000', scopes: 'read', redirect_uris: 'https://a.example/cb' }, 'company'],
      ['a redirect URI', 'POST', '/api/v2/oauth/clients', { name: 'ok', scopes: 'read', redirect_uris: 'https://a.example/c\u0000b' }, 'redirect_uris'],
      ['a native-app redirect URI', 'POST', '/api/v2/oauth/clients', { name: 'ok', scopes: 'read', redirect_uris: 'com.example.app:/c\u0000b' }, 'redirect_uris'],
      ['an updated name', 'PUT', '/api/v2/oauth/clients/:client', { name: '\u0000' }, 'name'],
      ['a token scope', 'POST', '/api/v2/oauth/tokens', { token: { client_id: ':client', scopes: ['read\u0000'] } }, 'scopes'],
    ])('answers 422 (not 500) for a NUL character in %s', async (_what, method, url, body, field) => {
      const payload = JSON.stringify(body).replace('":client"', fx.ids.client);
      const res = await expectRejected({ method: method as 'POST', url: url.replace(':client', fx.ids.client), headers: json(fx.auth.admin), payload }, [422]);
      expect(Object.keys(res.json().details)).toEqual([field]);
    });

    it('answers 401 (not 500) to Basic credentials whose email holds a NUL character', async () => {
      const authorization = `Basic ${Buffer.from(`a\u0000b@example.com:${fx.admin.password}`).toString('base64')}`;
      await expectRejected({ method: 'GET', url: '/api/v2/oauth/clients', headers: { authorization } }, [401]);
    });

    it('answers 404 in the envelope (not Fastify\'s own 400/414 shape) for malformed percent-encoding and overlong ids', async () => {
      for (const url of ['/api/v2/oauth/clients/%E0%A4%A', '/api/v2/oauth/tokens/%ff.json', `/api/v2/oauth/clients/${'1'.repeat(300)}`, `/api/v2/oauth/clients/${'9'.repeat(250)}/client_secret`]) {
        await expectRejected({ method: 'GET', url, headers: { authorization: fx.auth.admin } }, [404]);
      }
      await expectRejected({ method: 'DELETE', url: `/api/v2/oauth/tokens/${'1'.repeat(300)}`, headers: { authorization: fx.auth.admin } }, [404]);
    });
  });

  it('sent thousands of hostile requests (part of the 10,000 per run of issue 7)', () => {
    const seconds = (Date.now() - started) / 1000;
    console.log(`REST fuzzing: ${sender.sent} requests in ${seconds.toFixed(1)} s`);
    expect(sender.sent).toBeGreaterThanOrEqual(runs(5_000));
  });
});
