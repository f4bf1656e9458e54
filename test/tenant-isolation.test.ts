import { readdirSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { CROSS_TENANT, TenantSql } from '../src/db/tenant-sql';
import type { SqlQuery } from '../src/db/create-db';
import { createTestDb, type TestDb } from './helpers/test-db';
import { seedTenant, snapshot, type TenantFixture } from './helpers/tenant-fixtures';
import { CASES, NO_SQL_FUNCTIONS, type IsolationCase } from './tenant-isolation.cases';

// One isolation test per repository method, generated from the code (the model:
// Ory Hydra's per-method network isolation tests). Two accounts hold the same
// kinds of rows; every method of every repository class in
// src/domain/**/*.repository.ts (and every other exported function there that
// runs SQL) is called from account B with the ids of account A's rows, and must
// see and change nothing of A; the same call from A must reach A's rows (else
// the case proves nothing). A method without a case fails the first test.

const DOMAIN = path.join(__dirname, '../src/domain');

interface Method {
  key: string;
  name: string;
  repository?: (new (sql: TenantSql) => object) & { prototype: Record<string, unknown> };
}

/** Every prototype method of every exported class, and every other exported function, of the repository modules. */
function discover(): Method[] {
  const files = (readdirSync(DOMAIN, { recursive: true }) as string[]).filter((f) => f.endsWith('.repository.ts')).sort();
  const found: Method[] = [];
  for (const file of files) {
    const exported = jest.requireActual(path.join(DOMAIN, file)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(exported)) {
      if (typeof value !== 'function') continue;
      if (!/^class\b/.test(Function.prototype.toString.call(value))) {
        found.push({ key: name, name });
        continue;
      }
      const repository = value as Method['repository'] & object;
      for (const method of Object.getOwnPropertyNames(repository.prototype)) {
        if (method !== 'constructor') found.push({ key: `${name}.${method}`, name: method, repository });
      }
    }
  }
  return found.filter((m) => !NO_SQL_FUNCTIONS.includes(m.key));
}

const methods = discover();
const caseOf = (m: Method): IsolationCase => CASES[m.key] ?? { run: () => Promise.reject(new Error(`no isolation case for ${m.key}`)) };

let db: TestDb;
let a: TenantFixture;
let b: TenantFixture;

beforeAll(async () => {
  db = await createTestDb();
  a = await seedTenant(db, 'a', true);
  b = await seedTenant(db, 'b');
});

afterAll(async () => {
  await db.close();
});

const ROLLBACK = new Error('rolled back on purpose');

/** Runs fn in a transaction that is always rolled back: every case starts from the same rows. */
async function rolledBack<T>(fn: (sql: SqlQuery) => Promise<T>): Promise<T> {
  let out: T | undefined;
  try {
    await db.transaction(async (sql) => {
      out = await fn(sql);
      throw ROLLBACK;
    });
  } catch (err) {
    if (err !== ROLLBACK) throw err;
  }
  return out as T;
}

/** The method called from `caller` on `target`'s ids: its result, and whether the rows compared changed. */
function call(m: Method, caller: TenantFixture, target: TenantFixture, targetOnly: boolean) {
  const c = caseOf(m);
  return rolledBack(async (raw) => {
    const sql = new TenantSql(raw);
    const compared = targetOnly ? target.account : undefined;
    const before = await snapshot(raw, compared);
    const result = await c.run(m.repository ? new m.repository(sql) : undefined, caller, target, sql);
    return { result, changed: (await snapshot(raw, compared)) !== before };
  });
}

test('every repository method has an isolation case, and every case names a method', () => {
  const keys = methods.map((m) => m.key);
  expect(keys.length).toBeGreaterThan(60);
  expect(keys.filter((k) => !(k in CASES))).toEqual([]);
  expect(Object.keys(CASES).filter((k) => !keys.includes(k))).toEqual([]);
});

const isolated = methods.filter((m) => 'nothing' in caseOf(m));
const spanning = methods.filter((m) => !('nothing' in caseOf(m)));

describe('called from another account with its rows ids, a repository method sees and changes nothing', () => {
  it.each(isolated.map((m) => [m.key, m] as const))('%s', async (_key, m) => {
    const c = caseOf(m);
    const targetOnly = c.writesOwn === true || c.crossTenant !== undefined;
    const spy = m.repository ? jest.spyOn(m.repository.prototype as Record<string, () => unknown>, m.name) : jest.fn();
    const own = await call(m, a, a, targetOnly);
    const wrong = await call(m, b, a, targetOnly);
    const sees = typeof c.nothing === 'function' ? (c.nothing as (r: unknown, t: TenantFixture) => void) : (r: unknown) => expect(r).toEqual(c.nothing);

    sees(wrong.result, a);
    expect(wrong.changed).toBe(false);
    // the same call from the rows' own account reaches them: the ids are right
    expect(own.changed || !isDeepStrictEqual(own.result, wrong.result)).toBe(true);
    expect(spy.mock.calls.length).toBe(m.repository ? 2 : 0);
    spy.mockRestore();
  });
});

describe('a statement that spans accounts by design says why, and changes nothing of another account', () => {
  it.each(spanning.map((m) => [m.key, m] as const))('%s', async (_key, m) => {
    const c = caseOf(m);
    const wrong = await call(m, b, a, true);
    expect(Object.keys(CROSS_TENANT)).toContain(c.crossTenant);
    expect(wrong.changed).toBe(false);
  });
});
