import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { openapi, type OpenApiDocument } from '../src/http/plugins/openapi';
import { openapiConformance, takeOpenApiViolations, type ConformanceMode } from '../src/http/plugins/openapi-conformance';
import { answer, ERRORS } from '../src/rest/schemas';

// The mechanism that checks every answer of the test suite against the OpenAPI
// document (test/helpers/openapi-conformance.ts fails a file that got one it does not
// describe) must itself catch what it is for: throwaway routes answer wrongly on purpose.

const Thing = Type.Object({ id: Type.Integer(), name: Type.String() }, { additionalProperties: false });

async function appWith(mode: ConformanceMode): Promise<FastifyInstance> {
  const fastify = Fastify({ logger: false });
  await fastify.register(openapiConformance, { mode, document: () => fastify.swagger() as unknown as OpenApiDocument });
  await fastify.register(openapi, { version: 'test' });
  const schema = { tags: ['Probe'], response: { 200: answer(Thing, 'A thing'), 404: ERRORS[404] } };
  fastify.get('/api/v2/probe/right', { schema }, async () => ({ id: 1, name: 'ok' }));
  // fast-json-stringify would drop `extra` and print `id` as 2: the object itself is checked
  fastify.get('/api/v2/probe/extra-field', { schema }, async () => ({ id: 1, name: 'x', extra: 'leak' }));
  fastify.get('/api/v2/probe/wrong-type', { schema }, async () => ({ id: '2', name: 'x' }));
  fastify.get('/api/v2/probe/missing-field', { schema }, async (_request, reply) => reply.type('application/json').send(JSON.stringify({ id: 1 })));
  fastify.get('/api/v2/probe/undeclared-status', { schema }, async (_request, reply: FastifyReply) => reply.code(409).send({ id: 1, name: 'x' }));
  fastify.get('/api/v2/probe/error-shape', { schema }, async (_request, reply) => reply.code(404).send({ error: 'NotFound', description: 'Not found' }));
  fastify.get('/api/v2/probe/undocumented', { schema: { hide: true } }, async () => ({ id: 1 }));
  fastify.get('/elsewhere', async () => ({ anything: true }));
  await fastify.ready();
  return fastify;
}

describe('the OpenAPI conformance check of the tests', () => {
  let record: FastifyInstance;
  let fail: FastifyInstance;

  beforeAll(async () => {
    record = await appWith('record');
    fail = await appWith('fail');
  });
  afterAll(async () => {
    await record.close();
    await fail.close();
  });
  afterEach(() => takeOpenApiViolations()); // the violations below are on purpose: the file must not fail for them

  const get = (app: FastifyInstance, path: string) => app.inject({ method: 'GET', url: path });

  it('records nothing for an answer the document describes, or a route outside /api/v2', async () => {
    expect((await get(record, '/api/v2/probe/right')).json()).toEqual({ id: 1, name: 'ok' });
    await get(record, '/elsewhere');
    expect(takeOpenApiViolations()).toEqual([]);
  });

  it.each([
    ['/api/v2/probe/extra-field', /before serialization.*must NOT have additional properties/],
    ['/api/v2/probe/wrong-type', /before serialization.*\/id must be integer/],
    ['/api/v2/probe/missing-field', /the body sent.*must have required property 'name'/],
    ['/api/v2/probe/undeclared-status', /status 409 is not declared \(declared: 200, 404\)/],
    ['/api/v2/probe/error-shape', /\/error must be equal to constant/],
    ['/api/v2/probe/undocumented', /not in the OpenAPI document/],
  ])('records a violation for %s', async (path, problem) => {
    await get(record, path);
    const violations = takeOpenApiViolations();
    expect(violations).toHaveLength(1);
    expect(violations[0].problems.join(' | ')).toMatch(problem);
  });

  it('in fail mode (spawned test servers) turns a violation into a 500 OpenApiViolation', async () => {
    const res = await get(fail, '/api/v2/probe/extra-field');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'OpenApiViolation', description: expect.stringContaining('GET /api/v2/probe/extra-field 200') });
    expect((await get(fail, '/api/v2/probe/right')).statusCode).toBe(200);
    expect(takeOpenApiViolations()).toEqual([]);
  });
});
