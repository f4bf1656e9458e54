import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestContext } from './helpers/test-app';

// docs/api.md, "Errors": Zendesk's error envelope, application/json; charset=utf-8, never a
// stack trace. §9: every response carries a request id.

const JSON_UTF8 = 'application/json; charset=utf-8';

/** No stack trace, no file path, whatever went wrong. */
function expectNoInternals(res: LightMyRequestResponse): void {
  expect(res.body).not.toContain('stack');
  expect(res.body).not.toContain('at /');
  expect(res.body).not.toMatch(/\.(t|j)s:\d+/);
}

describe('HTTP errors (docs/api.md, "Errors")', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await createTestApp();
  });
  afterAll(() => ctx.close());

  it('answers malformed JSON with 400 InvalidRequest', async () => {
    const res = await ctx.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query": "{ me { id } }"' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    const body = res.json();
    expect(body).toEqual({ error: 'InvalidRequest', description: expect.any(String) });
    expect(body.description.length).toBeGreaterThan(0);
    expectNoInternals(res);
  });

  it.each(['GET', 'POST', 'PUT', 'DELETE'] as const)('answers an unknown route (%s) with 404 RecordNotFound', async (method) => {
    const res = await ctx.inject({
      method,
      url: '/api/v2/no/such/route',
      ...(method === 'POST' || method === 'PUT' ? { headers: { 'content-type': 'application/json' }, payload: '{}' } : {}),
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    expect(res.json()).toEqual({ error: 'RecordNotFound', description: 'Not found' });
  });

  it('answers a body over 64 KiB with 413 PayloadTooLarge', async () => {
    const payload = JSON.stringify({ query: '{ me { id } }', variables: { padding: 'x'.repeat(64 * 1024) } });
    const res = await ctx.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    expect(res.json()).toEqual({ error: 'PayloadTooLarge', description: expect.any(String) });
    expectNoInternals(res);
  });

  it('accepts a body just under 64 KiB', async () => {
    const payload = JSON.stringify({ query: '{ __typename }', variables: { padding: 'x'.repeat(60 * 1024) } });
    const res = await ctx.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ __typename: 'Query' });
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded'])('answers a %s body with 415 UnsupportedMediaType', async (type) => {
    const res = await ctx.inject({ method: 'POST', url: '/graphql', headers: { 'content-type': type }, payload: '{"query":"{ me { id } }"}' });
    expect(res.statusCode).toBe(415);
    expect(res.headers['content-type']).toBe(JSON_UTF8);
    expect(res.json()).toEqual({ error: 'UnsupportedMediaType', description: expect.any(String) });
  });

  it('never shows a stack trace or a path, whatever the mistake', async () => {
    const requests: InjectOptions[] = [
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{' },
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '"just a string"' },
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query": 42}' },
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query": "{ me { id "}' },
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query": "{ nope }"}' },
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{"query": "query($n: Int!) { __typename }", "variables": {"n": "x"}}' },
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', authorization: 'Basic %%%' }, payload: '{"query": "{ me { id } }"}' },
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '[{"query": "{ __typename }"}]' },
      { method: 'POST', url: '/graphql', headers: { 'content-type': 'text/plain' }, payload: 'hello' },
      { method: 'GET', url: '/%E0%A4%A' },
      { method: 'GET', url: '/api/v2/oauth/clients/not-a-number' },
      { method: 'POST', url: '/nope', headers: { 'content-type': 'application/json' }, payload: '{"a":' },
    ];
    for (const req of requests) {
      const res = await ctx.inject(req);
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expectNoInternals(res);
    }
  });

  it('echoes a given x-request-id, on success and on error, and logs it', async () => {
    const ok = await ctx.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-abc.123' } });
    expect(ok.headers['x-request-id']).toBe('trace-abc.123');
    const missing = await ctx.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'trace-def_456' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-request-id']).toBe('trace-def_456');
    const line = ctx.logs.map((l) => JSON.parse(l)).find((l) => l.reqId === 'trace-def_456' && l.msg === 'request');
    expect(line).toMatchObject({ method: 'GET', url: '/nowhere', status: 404 });
  });

  it('generates a request id when none (or an unusable one) is given', async () => {
    const a = await ctx.inject({ method: 'GET', url: '/healthz' });
    const b = await ctx.inject({ method: 'GET', url: '/healthz' });
    const bad = await ctx.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'has spaces and "quotes"' } });
    for (const res of [a, b, bad]) expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    expect(bad.headers['x-request-id']).not.toContain('spaces');
  });
});
