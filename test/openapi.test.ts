import { readFileSync } from 'node:fs';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { printOpenApiFile } from '../src/http/openapi-file';
import { restRoutes } from '../src/rest/routes';
import { createTestApp, type TestContext } from './helpers/test-app';

// The REST API describes itself: an OpenAPI 3.1 document generated from the routes'
// schemas, served at /api/v2/openapi.json, committed as docs/openapi.json (like
// schema.graphql), shown by Swagger UI at /api/docs.

const FILE = path.join(__dirname, '..', 'docs', 'openapi.json');

describe('the OpenAPI document', () => {
  let ctx: TestContext;
  let onDisk: string;

  beforeAll(async () => {
    ctx = await createTestApp();
    onDisk = readFileSync(FILE, 'utf8');
  });
  afterAll(() => ctx.close());

  it('docs/openapi.json is what the routes generate (run `npm run openapi:emit` when this fails)', async () => {
    const printed = await printOpenApiFile();
    try {
      expect(onDisk).toBe(printed);
    } catch (err) {
      (err as Error).message = `docs/openapi.json is stale: run \`npm run openapi:emit\` and commit the result.\n\n${(err as Error).message}`;
      throw err;
    }
  });

  it('is served at GET /api/v2/openapi.json without credentials, the same as docs/openapi.json', async () => {
    for (const url of ['/api/v2/openapi.json', '/api/v2/openapi.json?x=1']) {
      const res = await ctx.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.json()).toEqual(JSON.parse(onDisk));
    }
  });

  it('is a valid OpenAPI 3.1 document (swagger-parser)', async () => {
    const doc = JSON.parse(onDisk);
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('has every /api/v2 route once, without the .json twins, and the OAuth 2.0 endpoints', () => {
    const doc = JSON.parse(onDisk) as { paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>> };
    const operations = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    const routes = restRoutes.flatMap((r) => r.paths.map((p) => `${r.method} /api/v2${p.replace(/:(\w+)/g, '{$1}')}`));
    expect(operations.filter((o) => o.includes(' /api/v2/')).sort()).toEqual([...routes].sort());
    expect(operations.filter((o) => o.endsWith('.json'))).toEqual([]);
    expect(operations).toEqual(expect.arrayContaining(['POST /oauth/tokens', 'POST /oauth/revoke', 'POST /oauth/introspect', 'GET /.well-known/oauth-authorization-server']));
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((o) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('serves Swagger UI at /api/docs and its assets from the package, without credentials', async () => {
    const page = await ctx.inject({ method: 'GET', url: '/api/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).not.toMatch(/https?:\/\/(?!www\.w3\.org)/); // no CDN
    const init = await ctx.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain('/api/v2/openapi.json');
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css']) {
      const res = await ctx.inject({ method: 'GET', url: `/api/docs/static/${asset}`, headers: { authorization: 'Basic bm9ib2R5Om5vdGhpbmc=' } });
      expect([asset, res.statusCode]).toEqual([asset, 200]);
      expect(res.body.length).toBeGreaterThan(1000);
    }
  });
});
