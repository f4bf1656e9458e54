import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { createTestApp, insertToken, type TestContext } from './helpers/test-app';

// Every operation docs/graphql.md shows (a ```graphql block, with the ```json block
// right after it as its variables) runs against the service, in the order of the
// guide, as an admin with a `read write` token: no errors, and data holding each
// top-level field the operation asks for, none null. A broken example fails here.
//
// The guide writes ids of the reader's own data as placeholders ("<client id>"); the
// test puts in ids of records it creates through the API first.

const GUIDE = join(__dirname, '..', 'docs', 'graphql.md');
/** how many examples the guide has (at least): the test must not quietly find none */
const EXAMPLES_WRITTEN = 12;

interface Example {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  /** response keys of the operation's top-level fields */
  fields: string[];
  /** the variables the operation declares */
  declared: string[];
  /** subscriptions run over graphql-ws, with a change made to see their first event */
  subscription: boolean;
}

function examplesOf(markdown: string): Example[] {
  const blocks = [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], text: m[2], start: m.index, end: m.index + m[0].length }));
  const examples: Example[] = [];
  blocks.forEach((block, i) => {
    if (block.lang !== 'graphql') return;
    const next = blocks[i + 1];
    const variablesFollow = next !== undefined && next.lang === 'json' && markdown.slice(block.end, next.start).trim() === '';
    const operations = parse(block.text).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    if (operations.length !== 1 || !operations[0].name) throw new Error(`each graphql block holds one named operation:\n${block.text}`);
    const fields = operations[0].selectionSet.selections.map((s) => {
      if (s.kind !== Kind.FIELD) throw new Error(`top-level fragments are not used in the guide:\n${block.text}`);
      return s.alias?.value ?? s.name.value;
    });
    examples.push({
      name: operations[0].name.value,
      query: block.text,
      variables: variablesFollow ? (JSON.parse(next.text) as Record<string, unknown>) : undefined,
      fields,
      declared: (operations[0].variableDefinitions ?? []).map((v) => v.variable.name.value),
      subscription: operations[0].operation === 'subscription',
    });
  });
  return examples;
}

/** Replaces each "<placeholder>" string with the fixture of that name; an unknown one is an error. */
function fill(value: unknown, fixtures: Record<string, string>): unknown {
  if (typeof value === 'string') {
    const placeholder = /^<(.+)>$/.exec(value);
    if (!placeholder) return value;
    const id = fixtures[placeholder[1]];
    if (id === undefined) throw new Error(`the guide uses the placeholder "${value}", which the test has no fixture for`);
    return id;
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, fixtures));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, fixtures)]));
  return value;
}

const examples = examplesOf(readFileSync(GUIDE, 'utf8'));

/** GitHub's anchors of a markdown file's headings (outside code blocks), in order. */
function anchorsOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, '');
  return [...prose.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
}

describe('docs/graphql.md: its links land on the section they name', () => {
  const docs = (file: string) => readFileSync(join(__dirname, '..', 'docs', file), 'utf8');

  // GitHub gives a second heading of the same text the anchor "-1": a link to the first would land on the wrong section
  test.each(['api.md', 'graphql.md'])('%s has no two headings with one anchor', (file) => {
    const anchors = anchorsOf(docs(file));
    expect(anchors.filter((a, i) => anchors.indexOf(a) !== i)).toEqual([]);
  });

  test('every link to a section of api.md or of the guide names an existing heading', () => {
    const guide = docs('graphql.md');
    const links = [...guide.matchAll(/\]\((api\.md)?#([^)]+)\)/g)].map((m) => `${m[1] ?? 'graphql.md'}#${m[2]}`);
    expect(links.length).toBeGreaterThan(10);
    const existing = new Set([...anchorsOf(docs('api.md')).map((a) => `api.md#${a}`), ...anchorsOf(guide).map((a) => `graphql.md#${a}`)]);
    expect(links.filter((link) => !existing.has(link))).toEqual([]);
  });
});

describe('docs/graphql.md: every example operation runs as written', () => {
  let ctx: TestContext;
  let authorization: string;
  const fixtures: Record<string, string> = {};

  /** An operation of the fixtures, as the admin; its data. */
  async function run(query: string, variables?: Record<string, unknown>): Promise<Record<string, { id: string }>> {
    const res = await ctx.graphql(query, variables, { authorization });
    const body = res.json<{ data?: Record<string, { id: string }>; errors?: unknown }>();
    expect({ status: res.statusCode, errors: body.errors }).toEqual({ status: 200, errors: undefined });
    return body.data!;
  }

  beforeAll(async () => {
    ctx = await createTestApp();
    const account = await ctx.createAccount();
    const admin = await ctx.createUser(account, 'admin');
    for (let i = 0; i < 3; i++) await ctx.createUser(account, 'agent');
    authorization = `Bearer ${(await insertToken(ctx, admin)).token}`;
    const client = await run('mutation { createOAuthClient(input: { name: "Wallboard", scopes: "read write", redirectUris: ["https://wallboard.example.com/cb"] }) { id } }');
    fixtures['client id'] = client.createOAuthClient.id;
    const token = await run('mutation($c: ID!) { createOAuthToken(input: { clientId: $c, scopes: ["read"] }) { id } }', { c: fixtures['client id'] });
    fixtures['token id'] = token.createOAuthToken.id;
    const phone = await run('mutation { createPhoneNumber(input: { number: "+12518717001", callbackEnabled: true }) { id } }');
    fixtures['phone number id'] = phone.createPhoneNumber.id;
    const group = await run('mutation { createGroup(input: { name: "Support" }) { id } }');
    fixtures['group id'] = group.createGroup.id;
  });
  afterAll(() => ctx.close());

  test(`the guide has its ${EXAMPLES_WRITTEN} examples, each with its own operation name`, () => {
    expect(examples.length).toBeGreaterThanOrEqual(EXAMPLES_WRITTEN);
    expect(new Set(examples.map((e) => e.name)).size).toBe(examples.length);
  });

  /** A subscription example over graphql-ws: its first event after a change (creating a client). */
  async function firstEvent(example: Example): Promise<{ data?: Record<string, unknown> | null; errors?: unknown }> {
    if (!ctx.app.fastify.server.listening) await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    const port = (ctx.app.fastify.server.address() as { port: number }).port;
    const client = createClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization }, retryAttempts: 0 });
    try {
      const events = client.iterate<Record<string, unknown>>({ query: example.query, variables: fill(example.variables, fixtures) as Record<string, unknown> | undefined });
      const first = events.next();
      const deadline = Date.now() + 5000;
      while (ctx.app.eventFeed.subscriptionCount === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await run('mutation { createOAuthClient(input: { name: "Live", scopes: "read", redirectUris: ["https://live.example.com/cb"] }) { id } }');
      const result = await first;
      await events.return?.();
      return result.value as { data?: Record<string, unknown> | null; errors?: unknown };
    } finally {
      await client.dispose();
    }
  }

  test.each(examples.map((e) => [e.name, e] as const))('%s', async (_name, example) => {
    // a misspelt variable would be ignored by the server, and the example not say what it seems to
    expect(Object.keys(example.variables ?? {}).filter((name) => !example.declared.includes(name))).toEqual([]);
    if (example.subscription) {
      const event = await firstEvent(example);
      expect(event.errors).toBeUndefined();
      expect(Object.keys(event.data ?? {}).sort()).toEqual([...example.fields].sort());
      for (const field of example.fields) expect({ field, value: event.data![field] ?? null }).not.toEqual({ field, value: null });
      return;
    }
    const res = await ctx.graphql(example.query, fill(example.variables, fixtures) as Record<string, unknown> | undefined, { authorization });
    const body = res.json<{ data?: Record<string, unknown> | null; errors?: unknown }>();
    expect({ status: res.statusCode, errors: body.errors }).toEqual({ status: 200, errors: undefined });
    expect(Object.keys(body.data ?? {}).sort()).toEqual([...example.fields].sort());
    for (const field of example.fields) expect({ field, value: body.data![field] ?? null }).not.toEqual({ field, value: null });
  });
});
