import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as ts from 'typescript';
import { basicHeader, createTestApp, type TestContext } from '../helpers/test-app';

// docs/api.md, "Authentication": wrong-email and wrong-password answers are indistinguishable, in
// content and in time (an unknown email is verified against a dummy hash). And
// secrets are compared in constant time.

// 400 to 800 full KDF verifications, one at a time. This file runs in a jest run of
// its own (npm test, .ci/run), without other test files beside it: a median gap of a
// few ms cannot be told from noise while another worker keeps the second core busy.
jest.setTimeout(600_000);

const ME = '{ me { id } }';
const SAMPLES = 200;
const WARMUP = 10;
const MAX_MEDIAN_GAP_MS = 5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

describe('Basic auth: an unknown email and a wrong password take the same time', () => {
  let ctx: TestContext;
  let emails: string[];

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    // One user per wrong-password attempt, so that no email reaches the login
    // throttle; all share the first one's (full-cost scrypt) password hash.
    const first = await ctx.createUser(account, 'agent', { email: 'timing-0@example.com', password: 'the-right-password' });
    await ctx.db.sql(
      `INSERT INTO users (account_id, name, email, email_key, role, password_hash)
       SELECT account_id, 'timing ' || g, 'timing-' || g || '@example.com', 'timing-' || g || '@example.com', role, password_hash
         FROM users, generate_series(1, $2::int) AS g WHERE id = $1`,
      [String(first.id), 2 * SAMPLES + WARMUP],
    );
    emails = Array.from({ length: 2 * SAMPLES + WARMUP + 1 }, (_, i) => `timing-${i}@example.com`);
  });
  afterAll(() => ctx.close());

  it(`answers both alike: the median of ${SAMPLES} paired differences within ${MAX_MEDIAN_GAP_MS} ms`, async () => {
    const attempt = async (email: string) => {
      const started = process.hrtime.bigint();
      const res = await ctx.graphql(ME, {}, { authorization: basicHeader(email, 'a-wrong-password') });
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      return { ms, status: res.statusCode, body: res.json(), challenge: res.headers['www-authenticate'] };
    };
    const unknown = (i: number) => `nobody-${i}@example.com`;

    // The same status, body and challenge.
    const [known, stranger] = [await attempt(emails[0]), await attempt(unknown(0))];
    expect(known.status).toBe(401);
    expect({ ...stranger, ms: 0 }).toEqual({ ...known, ms: 0 });

    // Warm-up (JIT, the dummy hash, connection pool), then pairs, each in a random
    // order, so that drift and load hit both kinds alike.
    for (let i = 1; i <= WARMUP; i++) {
      await attempt(emails[i]);
      await attempt(unknown(i));
    }
    const wrongPassword: number[] = [];
    const unknownEmail: number[] = [];
    let next = WARMUP + 1;
    const measure = async (pairs: number) => {
      for (let i = 0; i < pairs; i++, next++) {
        let a, b;
        if (Math.random() < 0.5) {
          a = await attempt(emails[next]);
          b = await attempt(unknown(next));
        } else {
          b = await attempt(unknown(next));
          a = await attempt(emails[next]);
        }
        expect([a.status, b.status]).toEqual([401, 401]);
        wrongPassword.push(a.ms);
        unknownEmail.push(b.ms);
      }
    };
    // The gap is the median of the paired differences (each pair measured back to
    // back, in a random order): a shift between the two kinds shows in it at once,
    // while the machine's drift between pairs (other work on the cores, GC) cancels
    // out, which a difference of the two medians does not do.
    const gap = () => Math.abs(median(wrongPassword.map((ms, i) => ms - unknownEmail[i])));
    await measure(SAMPLES);
    // On a loaded machine one run's medians wander by a few ms: then measure as
    // many again and judge all of them together (never the better run alone).
    if (gap() > MAX_MEDIAN_GAP_MS) await measure(SAMPLES);
    const figures = {
      wrongPasswordMedianMs: Number(median(wrongPassword).toFixed(2)),
      unknownEmailMedianMs: Number(median(unknownEmail).toFixed(2)),
      gapMs: Number(gap().toFixed(2)),
      gapOfMediansMs: Number(Math.abs(median(wrongPassword) - median(unknownEmail)).toFixed(2)),
      samplesEach: wrongPassword.length,
    };
    if (process.env.TIMING_REPORT) process.stdout.write(`timing: ${JSON.stringify(figures)}\n`);
    // Both really ran the KDF: a scrypt at N = 2^15 takes well over a few milliseconds.
    expect(figures.unknownEmailMedianMs).toBeGreaterThan(10);
    expect({ ...figures, withinLimit: figures.gapMs <= MAX_MEDIAN_GAP_MS }).toEqual({ ...figures, withinLimit: true });
  });
});

// ---------------------------------------------------------------------------
// Constant-time comparisons: a check of the source, with the TypeScript parser.

/** Names that hold a secret, a hash of one, or a signature. */
const SECRET_NAME = /(secret|token|password|passw|hash|hmac|digest|signature|credential)/i;
/** Operands that make a comparison harmless: null/undefined, booleans, literals, typeof. */
function isHarmless(node: ts.Expression): boolean {
  if (node.kind === ts.SyntaxKind.NullKeyword || node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword) return true;
  if (ts.isIdentifier(node) && node.text === 'undefined') return true;
  if (ts.isNumericLiteral(node) || ts.isStringLiteralLike(node) || ts.isTypeOfExpression(node)) return true;
  return false;
}
function nameOf(node: ts.Expression): string | undefined {
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)) return node.argumentExpression.text;
  if (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node) || ts.isAsExpression(node)) return nameOf(node.expression);
  return undefined;
}

/** `===`/`!==`/`==`/`!=`, `.equals()`, `Buffer.compare()` or `localeCompare()` applied to a secret-named value. */
function variableTimeComparisons(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const where = (node: ts.Node) => `${fileName}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText().slice(0, 120)}`;
  const secretOperand = (node: ts.Expression) => {
    const name = nameOf(node);
    return name !== undefined && SECRET_NAME.test(name);
  };
  const visit = (node: ts.Node) => {
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      const equality = [
        ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken,
        ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken,
      ].includes(op);
      if (equality && !isHarmless(node.left) && !isHarmless(node.right) && (secretOperand(node.left) || secretOperand(node.right))) found.push(where(node));
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const target = node.expression.expression;
      if ((method === 'equals' || method === 'localeCompare') && (secretOperand(target) || node.arguments.some(secretOperand))) found.push(where(node));
      if (method === 'compare' && ts.isIdentifier(target) && target.text === 'Buffer' && node.arguments.some(secretOperand)) found.push(where(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Whether the function (or method) `name` in `source` calls one of `callees`. */
function callsWithin(source: string, name: string, callees: string[]): boolean {
  const file = ts.createSourceFile('x.ts', source, ts.ScriptTarget.ES2022, true);
  let result: boolean | undefined;
  const visit = (node: ts.Node) => {
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name && ts.isIdentifier(node.name) && node.name.text === name && node.body) {
      let calls = false;
      const inner = (n: ts.Node) => {
        if (ts.isCallExpression(n) && callees.includes(nameOf(n.expression) ?? '')) calls = true;
        ts.forEachChild(n, inner);
      };
      inner(node.body);
      result = calls;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  if (result === undefined) throw new Error(`no function ${name}`);
  return result;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('secrets are compared in constant time', () => {
  const SRC = path.resolve(__dirname, '../../src');
  const read = (file: string) => readFileSync(path.join(SRC, file), 'utf8');

  it('the check finds what it is meant to find', () => {
    expect(variableTimeComparisons('bad.ts', 'if (presented === row.secretHash) ok();')).toHaveLength(1);
    expect(variableTimeComparisons('bad.ts', 'const ok = tokenHash !== expected;')).toHaveLength(1);
    expect(variableTimeComparisons('bad.ts', 'if (Buffer.from(a).equals(storedHash)) ok();')).toHaveLength(1);
    expect(variableTimeComparisons('bad.ts', "if (row['password_hash'] == given) ok();")).toHaveLength(1);
    expect(variableTimeComparisons('ok.ts', 'if (constantTimeEqual(presented, row.secretHash)) ok();')).toEqual([]);
    expect(variableTimeComparisons('ok.ts', 'if (row.secretHash === null || typeof token === "string" || token.length !== 43) no();')).toEqual([]);
  });

  it(`finds no secret compared with ===, !==, .equals() or Buffer.compare() anywhere in src/`, () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap((file) => variableTimeComparisons(path.relative(SRC, file), readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it('verifies passwords, client secrets and cursor signatures with timingSafeEqual / constantTimeEqual', () => {
    expect(callsWithin(read('domain/auth/passwords.ts'), 'verifyPassword', ['timingSafeEqual'])).toBe(true);
    expect(callsWithin(read('domain/oauth-clients/oauth-client.service.ts'), 'findForGrant', ['constantTimeEqual'])).toBe(true);
    expect(callsWithin(read('domain/oauth-server/pkce.ts'), 'verifierMatches', ['constantTimeEqual'])).toBe(true);
    expect(callsWithin(read('domain/pagination.ts'), 'decode', ['constantTimeEqual'])).toBe(true);
    expect(callsWithin(read('domain/crypto.ts'), 'constantTimeEqual', ['timingSafeEqual'])).toBe(true);
  });

});
