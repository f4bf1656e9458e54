import fc from 'fast-check';
import { createServices } from '../src/domain/services';
import { RETENTION_DEFAULTS, type RetentionSettings } from '../src/domain/retention/retention-settings';
import { createTestApp, DEFAULT_LIMITS, TEST_HASH_KEY, type TestContext } from './helpers/test-app';
import { idsOf, insertCode, insertGrant, insertRateHit, insertSecret, insertToken, seedRetentionBase, type RetentionBase } from './helpers/retention-fixtures';

// Removing must never remove what is alive (docs/api.md, "Retention"): for grants, codes,
// tokens, client secrets and rolling-window hits with random times and states around a
// random "now", and random retention periods, a purge at that now removes exactly the
// rows an independent model of the rules says are over past their retention, and every
// token still live authenticates through the HTTP API (a live refresh token still
// refreshes). On PGlite by default, on PostgreSQL with TEST_DATABASE_URL.

jest.setTimeout(120_000);

const S = 1000;
const H = 3600 * S;
const D = 24 * H;

type Period = 'code' | 'grant' | 'token' | 'secret' | 'now';
/** A time: an offset from "now", or right at a retention's edge (now − the period, ± a few ms). */
type Spec = { at: number } | { edge: Period; delta: number };

const spec: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({ at: fc.integer({ min: -12 * D, max: 12 * D }) }),
  fc.record({ edge: fc.constantFrom<Period>('code', 'grant', 'token', 'secret', 'now'), delta: fc.integer({ min: -2, max: 2 }) }),
);
const maybe = fc.option(spec, { nil: null });
const period = fc.oneof(fc.constantFrom(0, 60, 3600, 86_400, 604_800), fc.integer({ min: 0, max: 8 * 86_400 }));

const scenario = fc.record({
  periods: fc.record({ code: period, grant: period, token: period, secret: period }),
  /** how far before the real clock the purge's "now" is */
  nowBefore: fc.integer({ min: 0, max: 2 * H }),
  grants: fc.array(fc.record({ created: spec, revoked: maybe }), { maxLength: 4 }),
  codes: fc.array(fc.record({ grant: fc.nat(), expires: spec, used: maybe }), { maxLength: 6 }),
  tokens: fc.array(fc.record({ grant: fc.option(fc.nat(), { nil: null }), expires: maybe, refresh: maybe, revoked: maybe }), { maxLength: 8 }),
  secrets: fc.array(maybe, { maxLength: 3 }),
  hits: fc.array(spec, { maxLength: 4 }),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

// ---- the model: the rules of docs/api.md "Retention", in plain TypeScript, on epoch milliseconds

interface Row { id: string }
interface GrantRow extends Row { created: number; revoked: number | null }
interface CodeRow extends Row { grantId: string; expires: number; used: number | null }
interface TokenRow extends Row { grantId: string | null; expires: number | null; refresh: number | null; revoked: number | null; token: string; refreshToken: string | null }

/** A token is over once revoked, or once its access token and its refresh token (if any) have both expired; never without an expiry. */
function tokenOverSince(t: TokenRow): number | null {
  const since: number[] = [];
  if (t.revoked !== null) since.push(t.revoked);
  if (t.expires !== null) since.push(t.refresh === null ? t.expires : Math.max(t.expires, t.refresh));
  return since.length === 0 ? null : Math.min(...since);
}
/** A code is over once used or expired, whichever came first. */
const codeOverSince = (c: CodeRow) => (c.used === null ? c.expires : Math.min(c.used, c.expires));

function expected(now: number, p: Scenario['periods'], rows: { grants: GrantRow[]; codes: CodeRow[]; tokens: TokenRow[]; secrets: (Row & { expires: number | null })[]; hits: (Row & { expires: number })[] }) {
  const past = (since: number | null, seconds: number) => since !== null && since < now - seconds * S;
  // codes, then tokens, then grants (which see the codes and tokens left), as the purge visits them
  const codesGone = rows.codes.filter((c) => past(codeOverSince(c), p.code));
  const tokensGone = rows.tokens.filter((t) => past(tokenOverSince(t), p.token));
  const codesLeft = rows.codes.filter((c) => !codesGone.includes(c));
  const tokensLeft = rows.tokens.filter((t) => !tokensGone.includes(t));
  const grantsGone = rows.grants.filter((g) => {
    if (!past(g.created, p.grant)) return false;
    if (g.revoked !== null) return past(g.revoked, p.grant);
    return codesLeft.filter((c) => c.grantId === g.id).every((c) => past(codeOverSince(c), p.grant)) &&
      tokensLeft.filter((t) => t.grantId === g.id).every((t) => past(tokenOverSince(t), p.grant));
  });
  const goneGrantIds = new Set(grantsGone.map((g) => g.id));
  const ids = (list: Row[]) => list.map((r) => r.id).sort();
  return {
    removed: {
      oauth_authorization_codes: codesGone.length, oauth_tokens: tokensGone.length, oauth_grants: grantsGone.length,
      oauth_client_secrets: rows.secrets.filter((s) => past(s.expires, p.secret)).length, rate_window_hits: rows.hits.filter((h) => past(h.expires, 0)).length,
    },
    left: {
      oauth_grants: ids(rows.grants.filter((g) => !goneGrantIds.has(g.id))),
      // a removed grant's codes go with it
      oauth_authorization_codes: ids(codesLeft.filter((c) => !goneGrantIds.has(c.grantId))),
      oauth_tokens: ids(tokensLeft),
      oauth_client_secrets: ids(rows.secrets.filter((s) => !past(s.expires, p.secret))),
      rate_window_hits: ids(rows.hits.filter((h) => !past(h.expires, 0))),
    },
    tokensLeft: tokensLeft.map((t) => ({ ...t, grantId: t.grantId !== null && goneGrantIds.has(t.grantId) ? null : t.grantId })),
    grantsLeft: rows.grants.filter((g) => !goneGrantIds.has(g.id)),
  };
}

describe('the retention purge removes exactly what is over, and nothing alive (property)', () => {
  let ctx: TestContext;
  let base: RetentionBase;

  beforeAll(async () => {
    ctx = await createTestApp();
    base = await seedRetentionBase(ctx.db.sql, 'property');
  });
  afterAll(() => ctx.close());

  async function check(sc: Scenario): Promise<void> {
    const sql = ctx.db.sql;
    // each case starts from none of these rows (codes go with their grants)
    for (const table of ['oauth_tokens', 'oauth_grants', 'oauth_client_secrets', 'rate_window_hits']) await sql(`DELETE FROM ${table}`);
    const real = (await sql<{ now: Date }>('SELECT now() AS now'))[0].now.getTime();
    const now = real - sc.nowBefore;
    const seconds: Record<Period, number> = { ...sc.periods, now: 0 };
    const at = (s: Spec) => ('at' in s ? now + s.at : now - seconds[s.edge] * S + s.delta);
    const atOrNull = (s: Spec | null) => (s === null ? null : at(s));
    const date = (ms: number | null) => (ms === null ? null : new Date(ms));

    const grants: GrantRow[] = [];
    for (const g of sc.grants) {
      const row = { created: at(g.created), revoked: atOrNull(g.revoked) };
      grants.push({ id: await insertGrant(sql, base, { createdAt: new Date(row.created), revokedAt: date(row.revoked) }), ...row });
    }
    const codes: CodeRow[] = [];
    for (const c of grants.length === 0 ? [] : sc.codes) {
      const row = { grantId: grants[c.grant % grants.length].id, expires: at(c.expires), used: atOrNull(c.used) };
      codes.push({ id: await insertCode(sql, base, row.grantId, { expiresAt: new Date(row.expires), usedAt: date(row.used) }), ...row });
    }
    const tokens: TokenRow[] = [];
    for (const t of sc.tokens) {
      const row = { grantId: t.grant === null || grants.length === 0 ? null : grants[t.grant % grants.length].id, expires: atOrNull(t.expires), refresh: atOrNull(t.refresh), revoked: atOrNull(t.revoked) };
      const made = await insertToken(sql, base, { grantId: row.grantId, expiresAt: date(row.expires), refreshExpiresAt: date(row.refresh), revokedAt: date(row.revoked) });
      tokens.push({ ...row, ...made });
    }
    const secrets = [];
    for (const s of sc.secrets) secrets.push({ id: await insertSecret(sql, base, date(atOrNull(s))), expires: atOrNull(s) });
    const hits = [];
    for (const h of sc.hits) hits.push({ id: await insertRateHit(sql, new Date(at(h))), expires: at(h) });

    const want = expected(now, sc.periods, { grants, codes, tokens, secrets, hits });
    const settings: RetentionSettings = {
      ...RETENTION_DEFAULTS, codeSeconds: sc.periods.code, grantSeconds: sc.periods.grant, tokenSeconds: sc.periods.token, secretSeconds: sc.periods.secret,
      // small batches: the cases cross batch boundaries too
      batchSize: 2, pauseMs: 0,
    };
    const services = createServices({ db: ctx.db, hashKey: TEST_HASH_KEY, limits: DEFAULT_LIMITS, retention: settings });
    const report = await services.retention.run({ now: new Date(now) });
    expect(report.removed).toMatchObject(want.removed);
    for (const [table, ids] of Object.entries(want.left)) expect({ table, ids: (await idsOf(sql, table)).sort() }).toEqual({ table, ids });
    const grantIds = await sql<{ id: string; grant_id: string | null }>('SELECT id::text AS id, grant_id::text AS grant_id FROM oauth_tokens ORDER BY id');
    expect(Object.fromEntries(grantIds.map((r) => [r.id, r.grant_id]))).toEqual(Object.fromEntries(want.tokensLeft.map((t) => [t.id, t.grantId])));

    // every token live now authenticates; every live refresh token of a live family refreshes
    const clock = Date.now() + 5 * S;
    for (const t of want.tokensLeft) {
      if (t.revoked === null && (t.expires === null || t.expires > clock)) {
        const res = await ctx.inject({ method: 'GET', url: '/api/v2/oauth/tokens/current.json', headers: { authorization: `Bearer ${t.token}` } });
        expect({ token: t.id, status: res.statusCode }).toEqual({ token: t.id, status: 200 });
        expect(res.json().token.id).toBe(Number(t.id));
      }
    }
    for (const t of want.tokensLeft) {
      const family = want.grantsLeft.find((g) => g.id === t.grantId);
      if (t.revoked === null && t.refreshToken !== null && t.refresh !== null && t.refresh > clock && family && family.revoked === null) {
        const res = await ctx.inject({
          method: 'POST', url: '/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: t.refreshToken, client_id: base.clientIdentifier }).toString(),
        });
        expect({ token: t.id, status: res.statusCode, body: res.statusCode === 200 ? null : res.body }).toEqual({ token: t.id, status: 200, body: null });
      }
    }
  }

  it('for random rows, states, periods and "now"', async () => {
    await fc.assert(fc.asyncProperty(scenario, check), { numRuns: Number(process.env.RETENTION_PROPERTY_RUNS ?? 100) });
  });
});
