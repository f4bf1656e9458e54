import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';
import { getIntrospectionQuery, type IntrospectionQuery, type IntrospectionType } from 'graphql';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';

// The GraphQL schema explains itself (docs/graphql.md, "Descriptions"): every type, field,
// argument, input field and enum value has a description, checked on the emitted
// schema.graphql by `npm run lint` with two tools (graphql-eslint's require-description
// and graphql-schema-linter's default rules). These tests show that a field added
// without a description fails both, and that what a person exploring the API over HTTP
// reads (introspection, as Apollo Sandbox and GraphiQL load it) is described throughout.

const ROOT = path.join(__dirname, '..');
const SCHEMA_FILE = path.join(ROOT, 'schema.graphql');
const schemaText = readFileSync(SCHEMA_FILE, 'utf8');

/**
 * schema.graphql with one more field on type User, `roleNote: String` without a description:
 * what a resolver change that forgot it would emit (in its sorted place, after `role`).
 */
function withUndescribedField(): string {
  const user = schemaText.indexOf('\ntype User {\n');
  const role = schemaText.indexOf('\n  role: UserRole!\n', user);
  expect(user).toBeGreaterThan(0);
  expect(role).toBeGreaterThan(user);
  const at = role + '\n  role: UserRole!\n'.length;
  return `${schemaText.slice(0, at)}  roleNote: String\n${schemaText.slice(at)}`;
}

async function eslintFindings(text: string): Promise<ESLint.LintResult['messages']> {
  const eslint = new ESLint({ cwd: ROOT });
  const [result] = await eslint.lintText(text, { filePath: SCHEMA_FILE });
  return result.messages;
}

function schemaLinter(text: string): { status: number | null; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'schema-lint-'));
  try {
    const file = path.join(dir, 'schema.graphql');
    writeFileSync(file, text);
    const bin = path.join(ROOT, 'node_modules', 'graphql-schema-linter', 'lib', 'cli.js');
    const run = spawnSync(process.execPath, [bin, '--format', 'json', file], { cwd: dir, encoding: 'utf8' });
    return { status: run.status, output: run.stdout + run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('schema.graphql under the lint step', () => {
  it('has no finding from graphql-eslint', async () => {
    expect(await eslintFindings(schemaText)).toEqual([]);
  });

  it('fails graphql-eslint when a field has no description', async () => {
    const messages = await eslintFindings(withUndescribedField());
    expect(messages).toEqual([
      expect.objectContaining({ ruleId: '@graphql-eslint/require-description', severity: 2, message: expect.stringContaining('"roleNote"') }),
    ]);
  });

  it("has no finding under graphql-schema-linter's default rules", () => {
    const run = schemaLinter(schemaText);
    expect(JSON.parse(run.output).errors).toEqual([]);
    expect(run.status).toBe(0);
  });

  it('fails graphql-schema-linter when a field has no description', () => {
    const run = schemaLinter(withUndescribedField());
    expect(run.status).toBe(1);
    expect(JSON.parse(run.output).errors).toEqual([
      expect.objectContaining({ rule: 'fields-have-descriptions', message: 'The field `User.roleNote` is missing a description.' }),
    ]);
  });
});

describe('what Apollo Sandbox and GraphiQL show (introspection over HTTP)', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let schema: IntrospectionQuery['__schema'];
  let base: string;

  beforeAll(async () => {
    ctx = await createTestApp({ graphqlIntrospection: true });
    const account = await ctx.createAccount();
    admin = await ctx.createUser(account, 'admin');
    base = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: admin.basic },
      body: JSON.stringify({ query: getIntrospectionQuery({ inputValueDeprecation: true }) }),
    });
    const body = (await res.json()) as { data: IntrospectionQuery; errors?: unknown };
    expect({ status: res.status, errors: body.errors }).toEqual({ status: 200, errors: undefined });
    schema = body.data.__schema;
  });
  afterAll(async () => {
    await ctx?.close();
  });

  /** Every element of our types without a description, as `Type.field(arg)` paths. */
  function undescribed(types: readonly IntrospectionType[]): string[] {
    const missing: string[] = [];
    const check = (pathName: string, description: string | null | undefined) => {
      if (!description?.trim()) missing.push(pathName);
    };
    for (const type of types) {
      if (type.name.startsWith('__')) continue;
      check(type.name, type.description);
      if (type.kind === 'OBJECT' || type.kind === 'INTERFACE') {
        for (const field of type.fields) {
          check(`${type.name}.${field.name}`, field.description);
          for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name})`, arg.description);
        }
      }
      if (type.kind === 'INPUT_OBJECT') for (const field of type.inputFields) check(`${type.name}.${field.name}`, field.description);
      if (type.kind === 'ENUM') for (const value of type.enumValues) check(`${type.name}.${value.name}`, value.description);
    }
    return missing;
  }

  it('describes every type, field, argument, input field and enum value', () => {
    const ours = schema.types.filter((t) => !t.name.startsWith('__') && !['String', 'Boolean', 'Int', 'Float', 'ID'].includes(t.name));
    expect(ours.length).toBeGreaterThan(40);
    expect(undescribed(schema.types)).toEqual([]);
  });

  it('says on each operation who may use it and what a token needs, from the authorization policy', () => {
    const fieldsOf = (name: string) => {
      const type = schema.types.find((t) => t.name === name);
      if (type?.kind !== 'OBJECT') throw new Error(`no object type ${name}`);
      return new Map(type.fields.map((f) => [f.name, f.description ?? '']));
    };
    const query = fieldsOf('Query');
    const mutation = fieldsOf('Mutation');
    expect(query.get('users')).toMatch(/ Who: admins\. Token needs: `read`, `users:read` or `users`\.$/);
    expect(query.get('auditLogs')).toMatch(/ Who: admins\. Token needs: `read`, `auditlogs:read` or `auditlogs`\.$/);
    expect(query.get('groups')).toMatch(/ Who: agents and admins\. Token needs: `read`\.$/);
    expect(query.get('currentOAuthToken')).toMatch(/ Who: any user\. Token needs: none \(a token may always use it on itself\)\.$/);
    expect(mutation.get('createCallbackRequest')).toMatch(/ Who: agents and admins\. Token needs: `write`\.$/);
    // every root field says it
    for (const [name, description] of [...query, ...mutation]) expect(`${name}: ${description}`).toMatch(/ Who: .+\. Token needs: .+\.$/);
  });
});
