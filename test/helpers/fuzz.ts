import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createTestApp, insertToken, type TestContext, type TestUser } from './test-app';

// Shared pieces of the property-based fuzzers (test/fuzz.rest.test.ts and
// test/fuzz.graphql.test.ts, issue 7 item 1): a fixture with one account full
// of records and one token per kind of credential, JSON text that can say what
// JSON.stringify cannot (duplicate keys, `__proto__`, 1e400, invalid UTF-8),
// arbitraries of hostile values, and the checks every answer must pass.

export const JSON_UTF8 = 'application/json; charset=utf-8';

/** Multiplies every numRuns; FUZZ_SCALE=10 for a long local hunt. CI runs 1. */
export const FUZZ_SCALE = Number(process.env.FUZZ_SCALE ?? 1) || 1;
export const runs = (n: number) => Math.max(1, Math.round(n * FUZZ_SCALE));

// ---------------------------------------------------------------------------
// Fixture

export interface FuzzFixture {
  ctx: TestContext;
  admin: TestUser;
  /** Authorization header values */
  auth: {
    /** the admin, scopes read write: every request that should pass authorization */
    admin: string;
    /** admin token with scopes ["read"]: cannot write */
    readOnly: string;
    /** admin token with scopes ["write"]: cannot read */
    writeOnly: string;
    /** admin token with an invalid scope: every request 403 (docs/api.md, "Scopes and roles") */
    invalidScope: string;
    /** read write token of a client that only allows read */
    readOnlyClient: string;
    /** admin token with the impersonate scope (the account has no end user to impersonate) */
    impersonator: string;
    revoked: string;
    expired: string;
  };
  /** Ids of records that exist (REST numbers as strings). Never deleted: the fuzzers only send requests that must fail. */
  ids: {
    client: string;
    /** an admin token that no request authenticates with */
    token: string;
    phoneNumber: string;
    group: string;
    /** an agent of the caller's account (the admin's own id would make the password routes ask for the previous one) */
    user: string;
    otherClient: string;
    otherUser: string;
    otherToken: string;
    otherPhoneNumber: string;
    otherGroup: string;
    /** a record of the account's audit log, and one of the other account's */
    auditLog: string;
    otherAuditLog: string;
    webhook: string;
    otherWebhook: string;
    /** an invocation of `webhook`, and one of `otherWebhook` */
    invocation: string;
    otherInvocation: string;
    /** `user`'s membership of `group` (so a create with both, the only valid pair, is a duplicate: never stored), and one of the other account */
    membership: string;
    otherMembership: string;
    /** a queued callback request of the account (created by the admin), and one of the other account */
    callback: string;
    otherCallback: string;
    /** the admin's `token` as an entry of their authorized apps (token-<id>), and the other account's token as one */
    app: string;
    otherApp: string;
  };
}

// a local address nothing listens on: a test send (POST /webhooks/{id}/test) is refused at once, and goes nowhere else
const FUZZ_WEBHOOK = '{ name: "fuzz", endpoint: "http://127.0.0.1:9/fuzz", httpMethod: POST, requestFormat: JSON, status: ACTIVE }';

export async function createFuzzFixture(): Promise<FuzzFixture> {
  const ctx = await createTestApp();
  const account = await ctx.createAccount();
  const admin = await ctx.createUser(account, 'admin');
  const other = await ctx.createUser(await ctx.createAccount(), 'admin');
  await ctx.createUser(other.accountId, 'end_user', { email: 'end-user@example.com' });
  const bearer = async (opts: Parameters<typeof insertToken>[2]) => `Bearer ${(await insertToken(ctx, admin, opts)).token}`;
  const main = await insertToken(ctx, admin, { scopes: ['read', 'write'] });
  const spare = await insertToken(ctx, admin, { scopes: ['read', 'write'] });
  const foreign = await insertToken(ctx, other, { scopes: ['read', 'write'] });
  const phone = (accountId: bigint) => ctx.db.prisma.voicePhoneNumber.create({ data: { accountId, number: '+12518717081' } });
  const group = (accountId: bigint) => ctx.db.prisma.group.create({ data: { accountId, name: 'support' } });
  const auditLog = (user: TestUser) =>
    ctx.db.prisma.auditLog.create({
      data: { accountId: user.accountId, actorId: user.id, actorName: 'admin', action: 'create', sourceType: 'oauth_client', sourceId: 1n, sourceLabel: 'app', changedFields: [], changeDescription: 'Created', via: 'api' },
    });
  const webhook = async (user: TestUser) =>
    String((await ctx.graphql(`mutation { createWebhook(input: ${FUZZ_WEBHOOK}) { id } }`, {}, { authorization: user.basic })).json().data.createWebhook.id);
  const fixture: FuzzFixture = {
    ctx,
    admin,
    auth: {
      admin: `Bearer ${main.token}`,
      readOnly: await bearer({ scopes: ['read'] }),
      writeOnly: await bearer({ scopes: ['write'] }),
      invalidScope: await bearer({ scopes: ['read', 'write', 'tickets:delete'] }),
      readOnlyClient: await bearer({ scopes: ['read', 'write'], clientScopes: 'read' }),
      impersonator: await bearer({ scopes: ['read', 'write', 'impersonate'] }),
      revoked: await bearer({ revokedAt: new Date(Date.now() - 1000) }),
      expired: await bearer({ expiresAt: new Date(Date.now() - 1000) }),
    },
    ids: {
      client: String(main.clientId),
      token: String(spare.id),
      phoneNumber: String((await phone(account)).id),
      group: String((await group(account)).id),
      user: String((await ctx.createUser(account, 'agent')).id),
      otherClient: String(foreign.clientId),
      otherUser: String(other.id),
      otherToken: String(foreign.id),
      otherPhoneNumber: String((await phone(other.accountId)).id),
      otherGroup: String((await group(other.accountId)).id),
      auditLog: String((await auditLog(admin)).id),
      otherAuditLog: String((await auditLog(other)).id),
      webhook: await webhook(admin),
      otherWebhook: await webhook(other),
      invocation: '',
      otherInvocation: '',
      membership: '',
      otherMembership: '',
      callback: '',
      otherCallback: '',
      app: `token-${spare.id}`,
      otherApp: `token-${foreign.id}`,
    },
  };
  const invocation = async (accountId: bigint, webhookId: string) =>
    String((await ctx.db.prisma.webhookInvocation.create({ data: { accountId, webhookId: BigInt(webhookId), eventId: randomUUID(), eventType: 'zen:event-type:oauth_client.created', status: 'success' } })).id);
  fixture.ids.invocation = await invocation(account, fixture.ids.webhook);
  fixture.ids.otherInvocation = await invocation(other.accountId, fixture.ids.otherWebhook);
  const membership = async (accountId: bigint, userId: string, groupId: string) =>
    String((await ctx.db.prisma.groupMembership.create({ data: { accountId, userId: BigInt(userId), groupId: BigInt(groupId) } })).id);
  fixture.ids.membership = await membership(account, fixture.ids.user, fixture.ids.group);
  fixture.ids.otherMembership = await membership(other.accountId, fixture.ids.otherUser, fixture.ids.otherGroup);
  const callback = async (accountId: bigint, phoneNumberId: string, createdById: bigint) =>
    String((await ctx.db.prisma.callbackRequest.create({
      data: { accountId, phoneNumberId: BigInt(phoneNumberId), requesterPhoneNumber: '+14155552671', requestedGroupIds: [], routedGroupIds: [], createdById },
    })).id);
  fixture.ids.callback = await callback(account, fixture.ids.phoneNumber, admin.id);
  fixture.ids.otherCallback = await callback(other.accountId, fixture.ids.otherPhoneNumber, other.id);
  return fixture;
}

/** Sends through fastify.inject and counts: the files assert how many requests they made. */
export class Sender {
  sent = 0;
  constructor(private readonly ctx: TestContext) {}
  async send(opts: InjectOptions): Promise<LightMyRequestResponse> {
    this.sent++;
    return this.ctx.inject(opts);
  }
}

// ---------------------------------------------------------------------------
// JSON text beyond JSON.stringify

/** A literal written as is into the JSON text: 1e400, -0, 123456789012345678901234567890 … */
export class RawJson {
  constructor(readonly text: string) {}
  toString() {
    return `RawJson(${this.text})`;
  }
}

/** An object whose keys may repeat (JSON.parse keeps the last) or be `__proto__`. */
export class DupObject {
  constructor(readonly entries: [string, unknown][]) {}
}

/** JSON text of a value made of plain data, RawJson and DupObject; undefined members are left out. */
export function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof DupObject) {
    return `{${value.entries.filter(([, v]) => v !== undefined).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : toJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') return toJson(new DupObject(Object.entries(value)));
  return JSON.stringify(value) ?? 'null';
}

/** `{"a":{"a":…1…}}` or `[[[…]]]`, `levels` deep, as text (JSON.stringify would recurse). */
export const deepObject = (levels: number) => new RawJson(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);
export const deepArray = (levels: number) => new RawJson(`${'['.repeat(levels)}${']'.repeat(levels)}`);

/** Request bodies over the 64 KiB limit (413); built once, they are large. */
export const ONE_MB_STRING_BODY = JSON.stringify({ name: 'x'.repeat(1024 * 1024), scopes: 'read' });
export const JUST_OVER_LIMIT_BODY = JSON.stringify({ padding: 'y'.repeat(64 * 1024) });

// ---------------------------------------------------------------------------
// Hostile values

const ADVERSARIAL_STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '\u0000\u0000\u0000', '\t\n\r', '\u202e\u2066evil', '\ufeff', '\u200b', '\ud800', '\udfff', '\ud83d\ude00',
  'Z̷̡̛a̴l̶g̸o̵', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '１２３', '١٢٣', '\u00a0', "'; DROP TABLE users; --", '" OR 1=1 --', '$1', '%s%s%n', '${7*7}', '{{7*7}}',
  '<script>alert(1)</script>', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'null', 'undefined', 'NaN', 'true',
  '../../etc/passwd', 'C:\\Windows', '\\', '"', '\\u0000', 'x'.repeat(300), 'é'.repeat(200),
];

/** Strings a parser or a database may choke on: NUL, lone surrogates, RTL overrides, combining marks, injections, long ones. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ADVERSARIAL_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\u0000', '\ud800', '\u202e'), fc.string({ maxLength: 10 })).map(([a, b, c]) => a + b + c) },
  { weight: 1, arbitrary: fc.integer({ min: 256, max: 5000 }).chain((n) => fc.constantFrom('x', 'é', '\u0000', '💥').map((c) => c.repeat(n))) },
);

/** Numbers JSON can carry but code often mishandles, as raw literals where JSON.stringify would lose them. */
export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    0, -1, 1.5, -0.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 1e300, -1e300, 5e-324,
    new RawJson('-0'), new RawJson('1e400'), new RawJson('-1e400'), new RawJson('9223372036854775808'), new RawJson('9223372036854775807'),
    new RawJson('123456789012345678901234567890'), new RawJson('1E3'), new RawJson('0.0000000000000000000000001'), new RawJson('1.0'),
  ),
  fc.integer({ min: -(2 ** 31), max: 0 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Object keys other than the prototype-polluting ones (JSON.parse would make `__proto__` an own key, the parser refuses it). */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'a\u0000b', 'toString', 'hasOwnProperty', 'valueOf', '0', '-1', 'id', 'ID', 'x'.repeat(200), '\ud800'),
  fc.string({ unit: 'binary', maxLength: 12 }),
).filter((k) => k !== '__proto__' && k !== 'constructor' && k !== 'prototype');

/** Any JSON value at all, hostile leaves included (never `__proto__` keys: those are their own case). */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.constantFrom(true, false, null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileKey, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** Bodies that smuggle prototype-polluting keys; the JSON parser must refuse them (400). */
export const pollutingBody: fc.Arbitrary<string> = fc.tuple(
  fc.constantFrom(
    '{"__proto__":{"isAdmin":true}}',
    '{"constructor":{"prototype":{"isAdmin":true}}}',
    '{"a":1,"__proto__":{"role":"admin"}}',
    '{"client":{"__proto__":{"scopes":"read write"}}}',
    '{"token":{"client_id":1,"scopes":["read"],"__proto__":{"x":1}}}',
    '{"callback_request":{"constructor":{"prototype":{"x":1}}}}',
    '{"query":"{ me { id } }","variables":{"__proto__":{"x":1}}}',
    '{"query":"{ me { id } }","variables":{"input":{"constructor":{"prototype":{"x":1}}}}}',
    '[{"__proto__":{}}]',
  ),
  fc.constantFrom('', ' ', '\n'),
).map(([body, pad]) => pad + body);

/**
 * encodeURIComponent for any string: a lone surrogate (which it refuses) becomes
 * the percent-encoded bytes of its CESU-8 form (%ED%A0%80), itself invalid UTF-8.
 */
export function pct(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff;
    if (pair) {
      out += encodeURIComponent(s.slice(i, i + 2));
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(s[i]);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Ids

/** How an id is spelled in a URL path segment, and the id the server sees once it strips `.json`. */
export interface IdCase {
  segment: string;
  label: string;
}

const MALFORMED_PERCENT = ['%', '%zz', '%E0%A4%A', '%ff', '%C0%AF', '%ED%A0%80', '1%', '%%31'];
const NOT_POSITIVE_INTEGERS = [
  '0', '-1', '-0', '00', '1.5', '1.0', '1e3', '1E3', '0x10', '0b1', '0o7', '+1', ' 1', '1 ', '1\u0000', '\u00001', '9223372036854775808',
  '18446744073709551616', '99999999999999999999999', '-9223372036854775808', 'NaN', 'Infinity', '-Infinity', 'null', 'undefined', 'true',
  '[]', '{}', '[1]', '__proto__', 'constructor', 'toString', '１', '١', '¹', 'Ⅰ', '1_000', '1,000', "1'", '1;', "1 OR 1=1", '$1', '*', '%',
  'current ', 'Current', 'CURRENT', 'x'.repeat(199), '1'.repeat(201), '1'.repeat(5000),
];

/** A canonical decimal id: what parseId accepts. */
const CANONICAL = /^[1-9]\d{0,18}$/;

/**
 * Path segments that must answer 404 wherever an id goes (docs/api.md, "Errors"): not a
 * positive integer, too big, malformed percent-encoding, non-canonical spellings
 * of an existing id, or ids that exist but not in the caller's account (or not at all).
 */
export function invalidIdSegment(existing: string, foreign: string): fc.Arbitrary<IdCase> {
  const enc = (s: string, label: string): IdCase => ({ segment: pct(s), label });
  const spelled = [`0${existing}`, `${existing}.0`, `${existing}e0`, ` ${existing}`, `${existing} `, `+${existing}`, `${existing}\u0000`, `-${existing}`, `${existing}.5`, `0x${Number(existing).toString(16)}`, `${existing}.json.json`];
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...NOT_POSITIVE_INTEGERS).map((s) => enc(s, 'not a positive integer')) },
    { weight: 2, arbitrary: fc.constantFrom(...spelled).map((s) => enc(s, 'non-canonical spelling of an existing id')) },
    { weight: 1, arbitrary: fc.constant(enc(foreign, "another account's id")) },
    { weight: 1, arbitrary: fc.bigInt({ min: 10n ** 7n, max: 2n ** 63n - 1n }).map((n) => enc(String(n), 'no such id')) },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_PERCENT).map((s) => ({ segment: s, label: 'malformed percent-encoding' })) },
    { weight: 2, arbitrary: hostileNumber.map((n) => enc(toJson(n), 'a number that is not a positive integer')) },
    { weight: 2, arbitrary: hostileString.map((s) => enc(s, 'a hostile string')) },
    { weight: 2, arbitrary: fc.integer({ min: -(2 ** 53), max: 0 }).map((n) => enc(String(n), 'zero or negative')) },
  ).filter((c) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(c.segment);
    } catch {
      return true;
    }
    const id = decoded.endsWith('.json') ? decoded.slice(0, -5) : decoded;
    // Never a live id of the caller's account, nor a segment that names another route.
    return !(CANONICAL.test(id) && BigInt(id) < 10n ** 7n && id !== foreign)
      && !['current', 'current.json', 'me', 'me.json', '.', '..', ''].includes(decoded) && !decoded.includes('/');
  });
}

/** Id values for GraphQL ID arguments that name nothing of the caller's (strings and ints both coerce to ID). */
export function invalidIdValue(foreign: string): fc.Arbitrary<string | number> {
  return fc.oneof(
    fc.constantFrom(...NOT_POSITIVE_INTEGERS),
    fc.constant(foreign),
    fc.bigInt({ min: 10n ** 7n, max: 2n ** 63n - 1n }).map(String),
    fc.integer({ min: -(2 ** 31), max: 0 }),
    fc.integer({ min: 10 ** 7, max: 2 ** 31 - 1 }),
    hostileString,
  ).filter((v) => typeof v === 'number' || !(CANONICAL.test(v) && BigInt(v) < 10n ** 7n && v !== foreign));
}

// ---------------------------------------------------------------------------
// Credentials

export type AuthFault = { label: string; headers: Record<string, string>; expect: 401 | 403 };

const printable = fc.string({ unit: fc.constantFrom(...'ABCabc019-_.~+/=:; ,"\'%\\!@#$^&*()[]{}<>?é\u00ff'.split('')), maxLength: 60 });

/** Credentials that authenticate nobody: 401 everywhere (docs/api.md, "Authentication"). Never a well-formed Basic pair: those run scrypt and write rate_window_hits. */
export function unauthenticated(fx: FuzzFixture): fc.Arbitrary<AuthFault> {
  const f = (label: string, headers: Record<string, string>): AuthFault => ({ label, headers, expect: 401 });
  return fc.oneof(
    fc.constant(f('no credentials', {})),
    fc.constant(f('revoked token', { authorization: fx.auth.revoked })),
    fc.constant(f('expired token', { authorization: fx.auth.expired })),
    fc.constant(f('impersonation without credentials', { 'x-on-behalf-of': fx.admin.email })),
    fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((t) => f('unknown well-formed token', { authorization: `Bearer ${t}` })),
    printable.map((t) => f('garbage bearer', { authorization: `Bearer ${t}` })),
    fc.constantFrom('Bearer', 'Bearer ', 'Basic', 'Basic ', 'Basic %%%', 'Basic Og==', 'Basic OmFiYw==', 'Basic YWJj', 'Digest x', 'Token abc', 'bearer', 'NTLM TlRMTVNTUAAB', '   ')
      .map((h) => f('malformed header', { authorization: h })),
    fc.constantFrom('Bearer ', 'Token ', 'Negotiate ', 'x ').chain((scheme) => printable.map((t) => f('unknown scheme or garbage', { authorization: scheme + t }))),
  );
}

/**
 * Credentials of a real user that the operation must refuse (403): an invalid
 * scope, impersonation without the scope, or impersonation of anyone who is not
 * an active end user of the account (an admin, another account's end user, junk).
 */
export function forbiddenEverywhere(fx: FuzzFixture): fc.Arbitrary<AuthFault> {
  const impersonating = (email: string): AuthFault => ({ label: 'impersonation of no end user of the account', headers: { authorization: fx.auth.impersonator, 'x-on-behalf-of': email }, expect: 403 });
  return fc.oneof(
    fc.constant<AuthFault>({ label: 'token with an invalid scope', headers: { authorization: fx.auth.invalidScope }, expect: 403 }),
    fc.constant<AuthFault>({ label: 'impersonation without the impersonate scope', headers: { authorization: fx.auth.admin, 'x-on-behalf-of': fx.admin.email }, expect: 403 }),
    fc.constantFrom(fx.admin.email, fx.admin.email.toUpperCase(), 'end-user@example.com', ' END-USER@example.com ', '', ' ', '%', "' OR '1'='1").map(impersonating),
    printable.map(impersonating),
  );
}

/** Tokens whose scopes (or whose client's scopes) do not grant `access`. */
export function scopeMismatch(fx: FuzzFixture, access: 'read' | 'write'): fc.Arbitrary<AuthFault> {
  const tokens = access === 'read' ? [['write-only token', fx.auth.writeOnly]] : [['read-only token', fx.auth.readOnly], ['token of a read-only client', fx.auth.readOnlyClient]];
  return fc.constantFrom(...tokens).map(([label, authorization]) => ({ label, headers: { authorization }, expect: 403 as const }));
}

// ---------------------------------------------------------------------------
// Objects with at least one invalid field

export interface FieldSpec {
  valid: fc.Arbitrary<unknown>;
  /** values that make the whole request invalid, whatever the other fields say */
  invalid: fc.Arbitrary<unknown>;
  required?: boolean;
}
export type ObjectSpec = Record<string, FieldSpec>;

/**
 * An object of the spec's fields where at least one field holds an invalid
 * value (the last occurrence, when a key repeats), the others valid, invalid or
 * absent, shuffled, with unknown keys of hostile values mixed in (unless
 * `noise: false`: GraphQL refuses unknown input fields before any rule runs).
 */
export function invalidObject(spec: ObjectSpec, options: { reserved?: string[]; noise?: boolean } = {}): fc.Arbitrary<{ body: DupObject; invalid: string[] }> {
  const names = Object.keys(spec);
  const reserved = options.reserved ?? [];
  const noise = options.noise === false
    ? fc.constant([] as [string, unknown][])
    : fc.array(fc.tuple(hostileKey.filter((k) => !names.includes(k) && !reserved.includes(k)), hostileJson), { maxLength: 3 });
  return fc
    .tuple(
      fc.constantFrom(...names),
      fc.tuple(...names.map((n) => fc.tuple(fc.constantFrom('absent', 'valid', 'invalid', 'duplicate'), spec[n].valid, spec[n].invalid))),
      noise,
      fc.nat(),
    )
    .map(([forced, choices, extra, seed]) => {
      const entries: [string, unknown][] = [];
      const invalid: string[] = [];
      names.forEach((name, i) => {
        const [mode, good, bad] = choices[i];
        const m = name === forced && mode !== 'duplicate' ? 'invalid' : mode;
        if (m === 'valid') entries.push([name, good]);
        if (m === 'invalid') entries.push([name, bad]);
        if (m === 'duplicate') entries.push([name, good], [name, bad]); // JSON.parse keeps the last: still invalid
        if (m === 'invalid' || m === 'duplicate') invalid.push(name);
      });
      // Shuffled deterministically; a duplicated key stays in order (valid, then invalid).
      const units = [...entries.reduce((m, e) => m.set(e[0], [...(m.get(e[0]) ?? []), e]), new Map<string, [string, unknown][]>()).values(), ...extra.map((e) => [e])];
      const shuffled = units.map((u, i) => ({ u, k: (seed * (i + 7919)) % 104729 })).sort((a, b) => a.k - b.k).flatMap((x) => x.u);
      return { body: new DupObject(shuffled as [string, unknown][]), invalid };
    });
}

/** An object of the spec's fields that passes validation (required ones present, others maybe). */
export function validObject(spec: ObjectSpec): fc.Arbitrary<Record<string, unknown>> {
  const names = Object.keys(spec);
  return fc.tuple(...names.map((n) => (spec[n].required ? spec[n].valid.map((v) => [v]) : fc.option(spec[n].valid.map((v) => [v]), { nil: undefined })))).map((vals) => {
    const out: Record<string, unknown> = {};
    names.forEach((n, i) => {
      if (vals[i]) out[n] = vals[i]![0];
    });
    return out;
  });
}

const validName = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0 && !s.includes('\u0000'));
const nulInside = fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `${a}\u0000${b}`);
const badUris = fc.oneof(
  fc.constantFrom('not a uri', '/relative/cb', 'http://example.com/cb', 'https://a.example/cb#frag', 'https://*.example.com/cb', 'javascript:alert(1)',
    'data:text/html,hi', 'file:///etc/passwd', 'https://', '://nohost', `https://a.example/${'x'.repeat(2000)}`, 'https://a.example/c\u0000b', 'ht tp://a'),
  nulInside.map((s) => `https://a.example/${s}`),
);
const tooManyUris = Array.from({ length: 21 }, (_, i) => `https://a${i}.example/cb`);

/** OAuth client fields (docs/api.md, "OAuth clients"), as GraphQL's OAuthClientInput names them. */
export function oauthClientSpec(): ObjectSpec {
  return {
    name: { required: true, valid: validName, invalid: fc.oneof(fc.constantFrom(null, '', '   ', '\t\n', 'x'.repeat(256), ` ${'y'.repeat(300)} `), nulInside) },
    company: { valid: fc.option(validName, { nil: null }), invalid: fc.oneof(fc.constant('c'.repeat(256)), nulInside) },
    scopes: {
      required: true,
      valid: fc.constantFrom('read', 'write', 'read write', 'write read', ' read\twrite '),
      invalid: fc.oneof(fc.constantFrom(null, '', 'admin', 'READ', 'read read', 'read write read', 'read,write', 'impersonate', 'read\u0000'), hostileString.filter((s) => !/^\s*(read|write)(\s+(read|write))?\s*$/.test(s))),
    },
    redirectUris: {
      required: true,
      valid: fc.constantFrom(['https://app.example.com/cb'], ['http://localhost:3000/cb', 'com.example.app:/cb'], ['http://127.0.0.1/cb http://[::1]/cb']),
      invalid: fc.oneof(fc.constant(null), fc.constant([]), fc.constant(['']), fc.constant(tooManyUris), fc.array(badUris, { minLength: 1, maxLength: 3 })),
    },
    // unique in the account: a UUID never repeats
    clientIdentifier: { valid: fc.uuid(), invalid: fc.constantFrom('', 'a b', 'x'.repeat(101), 'é', 'a/b', 'a:b', 'a\u0000') },
    description: { valid: fc.option(validName, { nil: null }), invalid: fc.oneof(fc.constant('d'.repeat(1025)), nulInside) },
    logoUrl: {
      valid: fc.constantFrom(null, '', 'https://cdn.example.com/logo.png', 'http://[::1]:8080/l.png'),
      invalid: fc.oneof(fc.constantFrom('http://example.com/l.png', 'javascript:alert(1)', 'data:image/png;base64,AA', 'https://', 'l.png'), nulInside.map((s) => `https://a.example/${s}`)),
    },
  };
}

/** Token creation fields (docs/api.md, "OAuth tokens"), GraphQL names. */
export function oauthTokenSpec(fx: FuzzFixture): ObjectSpec {
  return {
    clientId: { required: true, valid: fc.constant(fx.ids.client), invalid: fc.oneof(fc.constant(null), fc.constant(''), invalidIdValue(fx.ids.otherClient).map(String)) },
    scopes: {
      required: true,
      valid: fc.constantFrom(['read'], ['read', 'write'], ['write'], ['tickets:delete'], ['impersonate']),
      invalid: fc.constantFrom(null, [], Array.from({ length: 51 }, () => 'read'), ['r'.repeat(101)], ['read\u0000'], ['\u0000']),
    },
  };
}

/** Callback request fields (docs/api.md, "Voice callback requests"), GraphQL names. */
export function callbackRequestSpec(fx: FuzzFixture): ObjectSpec {
  return {
    phoneNumberId: { required: true, valid: fc.constant(fx.ids.phoneNumber), invalid: fc.oneof(fc.constant(null), fc.constant(''), invalidIdValue(fx.ids.otherPhoneNumber).map(String)) },
    requesterPhoneNumber: {
      required: true,
      valid: fc.constantFrom('+12518717081', '+14155552671', '+442071838750'),
      invalid: fc.oneof(fc.constantFrom(null, '', '123', '+1', '+1 415 555 2671', '+999999999999999', '0014155552671', '+1415555267\u0000', '+12518717081x'), hostileString.filter((s) => !/^\s*\+\d/.test(s))),
    },
    groupIds: {
      valid: fc.constantFrom([], [fx.ids.group]),
      invalid: fc.oneof(
        fc.constant(Array.from({ length: 101 }, () => fx.ids.group)),
        fc.array(invalidIdValue(fx.ids.otherGroup).map(String), { minLength: 1, maxLength: 3 }).map((ids) => [fx.ids.group, ...ids]),
      ),
    },
  };
}

/** The audit log's filter (docs/api.md, "Audit log"), GraphQL names; valid ranges never end before they start. */
export function auditLogFilterSpec(fx: FuzzFixture): ObjectSpec {
  return {
    sourceType: { valid: fc.constantFrom('OAUTH_CLIENT', 'OAUTH_TOKEN', 'USER', 'GROUP', 'VOICE_PHONE_NUMBER', 'ACCOUNT'), invalid: fc.constantFrom('TICKET', 'oauth_client', '') },
    actorId: { valid: fc.constantFrom(String(fx.admin.id), '9223372036854775807'), invalid: fc.constantFrom('abc', '0', '-1', '1.5', '', '9223372036854775808') },
    action: { valid: fc.constantFrom('CREATE', 'UPDATE', 'DESTROY'), invalid: fc.constantFrom('DELETE', 'create', '') },
    createdFrom: { valid: fc.constantFrom('2026-01-01T00:00:00Z', '2026-06-01T00:00:00.5+02:00'), invalid: fc.constantFrom('yesterday', '2026-13-01T00:00:00Z', '2026-11-20', '') },
    createdTo: { valid: fc.constantFrom('2026-06-02T00:00:00Z', '2027-01-01T00:00:00.000Z'), invalid: fc.constantFrom('tomorrow', '2026-02-30T00:00:00Z', '20261120T000000Z') },
  };
}

/**
 * The directory's input fields (docs/api.md, "Users", "Groups", "Group memberships", "Voice
 * phone numbers", "Account settings"), GraphQL names; the REST fuzzer maps them to snake_case.
 * A user's email that exists already in the account, and a number it holds, are invalid.
 */
export function directorySpecs(
  fx: FuzzFixture,
): Record<'CreateUserInput' | 'UpdateUserInput' | 'GroupInput' | 'GroupMembershipInput' | 'PhoneNumberInput' | 'UpdatePhoneNumberInput' | 'AccountSettingsInput' | 'AgentAvailabilityInput', ObjectSpec> {
  const text = (max: number) => fc.oneof(fc.constantFrom('x'.repeat(max + 1), ` ${'y'.repeat(max + 5)} `), nulInside);
  const badEmail = fc.oneof(fc.constantFrom('', '  ', 'no-at', 'a@b', '@example.com', 'a b@example.com', `${'e'.repeat(250)}@example.com`, fx.admin.email, fx.admin.email.toUpperCase()), nulInside);
  const flag = { valid: fc.boolean(), invalid: fc.constant(null) };
  const phoneFields: ObjectSpec = {
    nickname: { valid: fc.constantFrom(null, '', 'Main line'), invalid: text(255) },
    callbackEnabled: flag,
    capabilities: { valid: fc.constantFrom({}, { voice: true }, { sms: true, mms: false }), invalid: fc.constantFrom(null, { voice: null }, { sms: true, mms: null }) },
  };
  return {
    CreateUserInput: {
      name: { required: true, valid: validName, invalid: fc.oneof(fc.constantFrom(null, '', '   '), text(255)) },
      email: { required: true, valid: fc.constant('fuzz-new-user@example.com'), invalid: fc.oneof(fc.constant(null), badEmail) },
      role: { valid: fc.constantFrom('ADMIN', 'AGENT', 'END_USER', null), invalid: fc.constant('OWNER') },
      password: { valid: fc.constantFrom(null, 'long enough password'), invalid: fc.constantFrom('', 'short', 'p'.repeat(1025)) },
    },
    UpdateUserInput: {
      name: { valid: validName, invalid: fc.oneof(fc.constantFrom(null, '', '   '), text(255)) },
      email: { valid: fc.constant('fuzz-renamed@example.com'), invalid: fc.oneof(fc.constant(null), badEmail) },
      role: { valid: fc.constantFrom('AGENT', 'END_USER'), invalid: fc.constantFrom(null, 'OWNER') },
      active: flag,
    },
    GroupInput: {
      name: { required: true, valid: validName, invalid: fc.oneof(fc.constantFrom(null, '', '   '), text(255)) },
      description: { valid: fc.constantFrom(null, '', 'First line'), invalid: text(1000) },
    },
    // the only valid pair is a member already (the fixture's membership): a create that slipped through would still be refused
    GroupMembershipInput: {
      userId: { required: true, valid: fc.constant(fx.ids.user), invalid: fc.oneof(fc.constantFrom<unknown>(null, ''), invalidIdValue(fx.ids.otherUser).map(String)) },
      groupId: { required: true, valid: fc.constant(fx.ids.group), invalid: fc.oneof(fc.constantFrom<unknown>(null, ''), invalidIdValue(fx.ids.otherGroup).map(String)) },
    },
    PhoneNumberInput: {
      number: {
        required: true,
        valid: fc.constantFrom('+14155552699', ' +442071838750 '),
        invalid: fc.oneof(fc.constantFrom(null, '', '123', '+1', '+1415555', '+999999999999999', '+1 415 555 2671', '+12518717081', '+1415555267\u0000'), hostileString.filter((s) => !/^\s*\+\d/.test(s))),
      },
      ...phoneFields,
    },
    UpdatePhoneNumberInput: phoneFields,
    AccountSettingsInput: {
      omnichannelRouting: flag,
      // the lifecycle's settings: whole numbers in their ranges (docs/api.md, "Account settings")
      callbackOfferTimeout: { valid: fc.integer({ min: 1, max: 600 }), invalid: fc.constantFrom<unknown>(null, 0, 601, -1, 2 ** 31 - 1) },
      callbackRetryDelay: { valid: fc.integer({ min: 0, max: 86_400 }), invalid: fc.constantFrom<unknown>(null, -1, 86_401) },
      callbackMaxAttempts: { valid: fc.integer({ min: 1, max: 10 }), invalid: fc.constantFrom<unknown>(null, 0, 11) },
      wrapUpTime: { valid: fc.integer({ min: 0, max: 3_600 }), invalid: fc.constantFrom<unknown>(null, -1, 3_601) },
    },
    // never ONLINE: a change that slipped through would route the fixture's queue
    AgentAvailabilityInput: {
      agentState: { required: true, valid: fc.constantFrom('AWAY', 'OFFLINE', 'TRANSFERS_ONLY'), invalid: fc.constantFrom<unknown>(null, 'BUSY', 'online') },
      via: { valid: fc.constantFrom(null, 'CLIENT', 'PHONE'), invalid: fc.constantFrom<unknown>('SKYPE', 'client') },
    },
  };
}

/** A webhook's fields (docs/api.md, "Webhooks"), GraphQL names; POST only, since a valid one may subscribe to events. */
export function webhookSpec(): ObjectSpec {
  const text = (max: number) => fc.oneof(fc.constantFrom('x'.repeat(max + 1), ` ${'y'.repeat(max + 5)} `), nulInside);
  return {
    name: { required: true, valid: validName, invalid: fc.oneof(fc.constantFrom(null, '', '   '), text(255)) },
    description: { valid: fc.constantFrom(null, '', 'To the SIEM'), invalid: text(1000) },
    endpoint: {
      required: true,
      valid: fc.constantFrom('https://hooks.example.com/z', 'http://127.0.0.1:9/hook'),
      invalid: fc.oneof(fc.constantFrom(null, '', 'not a url', '/relative', 'ftp://a.example/x', 'https://u:p@a.example/', 'javascript:alert(1)', `https://a.example/${'x'.repeat(2000)}`), nulInside),
    },
    httpMethod: { required: true, valid: fc.constant('POST'), invalid: fc.constant(null) },
    requestFormat: { required: true, valid: fc.constant('JSON'), invalid: fc.constant(null) },
    status: { required: true, valid: fc.constantFrom('ACTIVE', 'INACTIVE'), invalid: fc.constant(null) },
    subscriptions: {
      valid: fc.constantFrom(null, [], ['zen:event-type:oauth_token.revoked'], ['zen:event-type:user.created', 'zen:event-type:user.created']),
      invalid: fc.constantFrom(['zen:event-type:ticket.created'], ['oauth_token.revoked'], [''], ['zen:event-type:\u0000']),
    },
  };
}

// ---------------------------------------------------------------------------
// Checks every answer must pass

/**
 * Internals an answer must never show. A pattern is only held against the
 * answer when the request did not contain it (validation messages may quote
 * what the caller sent).
 */
const LEAKS: [string, RegExp][] = [
  ['stack frame', /\bat [\w$.<>]+ \(|(?:\n|\\n)\s+at \S/],
  ['source path', /\.(?:ts|js|mjs|cjs):\d+|node_modules|\/work\//],
  ['stack property', /"stack"|stacktrace/i],
  ['prisma', /prisma/i],
  ['SQL', /\bSELECT\s[^"]{0,200}\sFROM\s|\bINSERT INTO\s|\bUPDATE\s\S+\sSET\s|\bDELETE FROM\s|syntax error at or near|violates (?:unique|foreign key|not-null|check)|duplicate key value|relation "|column "|invalid byte sequence/],
  ['JavaScript error', /\b(?:TypeError|ReferenceError|RangeError|SyntaxError):|Cannot read propert|is not a function|is not iterable/],
];

export function leaksIn(body: string, request: string): string[] {
  return LEAKS.filter(([, re]) => re.test(body) && !re.test(request)).map(([name]) => name);
}

/** What the response looked like, for a failing property's message. */
export function describeResponse(res: LightMyRequestResponse): string {
  return `${res.statusCode} ${res.headers['content-type'] ?? '(no content-type)'} ${res.body.slice(0, 600)}`;
}

const ENVELOPE_ERRORS: Record<number, string> = {
  400: 'InvalidRequest',
  401: "Couldn't authenticate you",
  403: 'Forbidden',
  404: 'RecordNotFound',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'RecordInvalid',
  429: 'TooManyRequests',
};
const DETAIL_CODES = new Set(['BlankValue', 'InvalidValue', 'NotFound', 'TooLong']);

/**
 * Problems with a REST error answer (docs/api.md, "Errors"): a 4xx (one of `statuses` when
 * given), Zendesk's envelope as application/json; charset=utf-8, the error name
 * that goes with the status, no internals. Empty when all is well.
 */
export function envelopeProblems(res: LightMyRequestResponse, requestText: string, statuses?: number[]): string[] {
  const problems: string[] = [];
  const status = res.statusCode;
  if (status < 400 || status >= 500) problems.push(`status ${status} is not a 4xx`);
  if (statuses && !statuses.includes(status)) problems.push(`status ${status}, expected ${statuses.join(' or ')}`);
  if (res.headers['content-type'] !== JSON_UTF8) problems.push(`content-type ${res.headers['content-type']}`);
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    problems.push('body is not JSON');
  }
  if (body !== undefined) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) problems.push('body is not an object');
    else {
      const extra = Object.keys(body).filter((k) => !['error', 'description', 'details'].includes(k));
      if (extra.length) problems.push(`unexpected keys ${extra.join(', ')}`);
      if (typeof body.error !== 'string') problems.push('no error string');
      else if (ENVELOPE_ERRORS[status] && body.error !== ENVELOPE_ERRORS[status]) problems.push(`error ${JSON.stringify(body.error)} for status ${status}`);
      if (status === 401 ? 'description' in body : typeof body.description !== 'string') problems.push('description missing (or present on a 401)');
      if (status === 401 && !res.headers['www-authenticate']) problems.push('401 without WWW-Authenticate');
      if (status === 429 && !res.headers['retry-after']) problems.push('429 without Retry-After');
      if (status === 422) {
        const details = body.details;
        if (!details || typeof details !== 'object' || Object.keys(details).length === 0) problems.push('422 without details');
        else {
          for (const [field, list] of Object.entries(details)) {
            if (!Array.isArray(list) || list.length === 0 || !list.every((d: any) => DETAIL_CODES.has(d?.error) && typeof d?.description === 'string')) {
              problems.push(`details.${field} malformed`);
            }
          }
        }
      } else if ('details' in body) problems.push(`details on a ${status}`);
    }
  }
  for (const leak of leaksIn(res.body, requestText)) problems.push(`leaks ${leak}`);
  return problems;
}

/** Codes a GraphQL error may carry (docs/api.md, "Errors" plus Apollo's own for malformed operations). Never INTERNAL_SERVER_ERROR. */
export const GRAPHQL_CLIENT_ERROR_CODES = new Set([
  'BAD_REQUEST', 'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'RATE_LIMITED',
  'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED', 'OPERATION_RESOLUTION_FAILURE',
]);

export interface GraphQLOutcome {
  status: number;
  /** extensions.code of each error ([] when none) */
  codes: string[];
  /** the parsed body, when JSON */
  body: any;
  /** a REST-style envelope (the HTTP layer refused the request before Apollo) */
  envelope: boolean;
}

/**
 * Problems with any /graphql answer: never a 5xx, JSON, either GraphQL's
 * `{errors, data?}` with allowed codes and nothing internal in them, or (when
 * the HTTP layer refused the body) Zendesk's envelope.
 */
export function graphqlProblems(res: LightMyRequestResponse, requestText: string): { problems: string[]; outcome: GraphQLOutcome } {
  const problems: string[] = [];
  const outcome: GraphQLOutcome = { status: res.statusCode, codes: [], body: undefined, envelope: false };
  if (res.statusCode >= 500) problems.push(`status ${res.statusCode}`);
  if (!String(res.headers['content-type']).startsWith('application/json')) problems.push(`content-type ${res.headers['content-type']}`);
  try {
    outcome.body = JSON.parse(res.body);
  } catch {
    problems.push('body is not JSON');
  }
  const body = outcome.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    if ('errors' in body) {
      if (!Array.isArray(body.errors) || body.errors.length === 0) problems.push('errors is not a non-empty array');
      else {
        for (const e of body.errors) {
          const code = e?.extensions?.code;
          outcome.codes.push(code);
          if (typeof e?.message !== 'string') problems.push('error without message');
          if (!GRAPHQL_CLIENT_ERROR_CODES.has(code)) problems.push(`code ${code}`);
          const ext = Object.keys(e?.extensions ?? {}).filter((k) => !['code', 'details', 'retryAfter'].includes(k));
          if (ext.length) problems.push(`extensions carry ${ext.join(', ')}`);
        }
      }
    } else if ('error' in body) {
      outcome.envelope = true;
      problems.push(...envelopeProblems(res, requestText));
    } else if (!('data' in body)) problems.push('neither data nor errors');
  } else if (body !== undefined) problems.push('body is not an object');
  for (const leak of leaksIn(res.body, requestText)) if (!problems.includes(`leaks ${leak}`)) problems.push(`leaks ${leak}`);
  return { problems, outcome };
}

// ---------------------------------------------------------------------------
// The database, before and after

/**
 * Rows left out of the comparison: the login throttle's hits in rate_window_hits
 * (keys login-…: a refused Basic attempt is meant to write one). Column left out:
 * oauth_tokens.used_at, which the authenticator moves (at most once a minute)
 * whenever a token authenticates a request, even one that is then refused. The
 * callback limit's hits stay in: a refused request must not spend budget.
 */
const BOOKKEEPING_ROWS: Record<string, string> = { rate_window_hits: "WHERE t.key NOT LIKE 'login-%'" };

export type DbSnapshot = Record<string, { rows: number; digest: string }>;

/** Row count and a digest of every row of every table (but the bookkeeping). */
export async function snapshotDb(ctx: TestContext): Promise<DbSnapshot> {
  const tables = await ctx.db.sql<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`);
  const out: DbSnapshot = {};
  for (const { name } of tables) {
    const [row] = await ctx.db.sql<{ rows: number; digest: string }>(
      `SELECT count(*)::int AS rows, md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) AS digest
         FROM (SELECT (to_jsonb(t) - 'used_at')::text AS r FROM "${name.replace(/"/g, '""')}" t ${BOOKKEEPING_ROWS[name] ?? ''}) s`,
    );
    out[name] = { rows: Number(row.rows), digest: row.digest };
  }
  return out;
}

/** Lines the app logged at error level or above (pino level ≥ 50): each is a bug reaching the 500 path. */
export function errorLogs(ctx: TestContext, from = 0): string[] {
  return ctx.logs.slice(from).filter((l) => {
    try {
      return JSON.parse(l).level >= 50;
    } catch {
      return false;
    }
  }).map((l) => l.slice(0, 500));
}

/**
 * Registers the check every fuzz file runs after each property: nothing written
 * to the database (snapshotDb), nothing logged at error level. Call it after the
 * beforeAll that creates the fixture (jest runs beforeAll hooks in order).
 */
export function expectNothingWrittenOrLogged(ctx: () => TestContext): void {
  let before: DbSnapshot;
  let logMark = 0;
  beforeAll(async () => {
    before = await snapshotDb(ctx());
  });
  afterEach(async () => {
    const logged = errorLogs(ctx(), logMark);
    logMark = ctx().logs.length;
    const now = await snapshotDb(ctx());
    const expected = before;
    before = now; // one failure must not fail every later test
    expect(logged).toEqual([]);
    expect(now).toEqual(expected);
  });
}
