import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { OPENAPI_PATH, type OpenApiDocument } from './openapi';

// TESTS ONLY (buildApp's `openapiConformance`, set by test/helpers/test-app.ts, and
// OPENAPI_CONFORMANCE for the servers the tests spawn, honoured with NODE_ENV=test):
// every answer of a documented route is checked against the OpenAPI document the app
// serves. The status must be declared for the operation, and the body must validate
// against the declared schema, with Ajv (JSON Schema 2020-12, formats included),
// independently of the serializer: both the object the handler sent (before
// fast-json-stringify, which drops unknown fields and coerces types) and the bytes
// that went out are validated. A /api/v2 route missing from the document is a
// violation too.
//  - 'record': violations are kept (takeOpenApiViolations()); the jest setup file
//    test/helpers/openapi-conformance.ts fails the test file that caused any.
//  - 'fail': the answer becomes a 500 {"error":"OpenApiViolation"} (and an error log
//    line), so that the tests of a spawned server see it.

export type ConformanceMode = 'record' | 'fail';

export interface OpenApiViolation {
  request: string;
  route: string;
  status: number;
  problems: string[];
}

const VIOLATIONS = Symbol.for('helpdesk.openapiViolations');
type WithViolations = typeof globalThis & { [VIOLATIONS]?: OpenApiViolation[] };

/** The violations recorded so far in this process (jest: in this test file), removed. */
export function takeOpenApiViolations(): OpenApiViolation[] {
  const g = globalThis as WithViolations;
  const taken = g[VIOLATIONS] ?? [];
  g[VIOLATIONS] = [];
  return taken;
}

type Json = Record<string, unknown>;

interface Operation {
  statuses: Map<string, { validate?: ValidateFunction; hasBody: boolean }>;
}

/** Validators for every operation's answers, compiled from the document. */
function compile(doc: OpenApiDocument): Map<string, Operation> {
  // loaded here, in test mode only
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Ajv2020 = (require('ajv/dist/2020') as typeof import('ajv/dist/2020')).default;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const addFormats = (require('ajv-formats') as typeof import('ajv-formats')).default;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  const operations = new Map<string, Operation>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const statuses = new Map<string, { validate?: ValidateFunction; hasBody: boolean }>();
      for (const [status, declared] of Object.entries(operation.responses as Record<string, Json>)) {
        let at = pointer('paths', path, method, 'responses', status);
        let response = declared;
        const ref = response.$ref;
        if (typeof ref === 'string') {
          at = ref.slice(2);
          response = at.split('/').reduce<Json>((node, key) => node[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, doc);
        }
        const schema = ((response.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema;
        statuses.set(status, {
          hasBody: schema !== undefined,
          validate: schema === undefined ? undefined : ajv.compile({ $ref: `openapi.json#/${at}/content/${pointer('application/json')}/schema` }),
        });
      }
      operations.set(`${method.toUpperCase()} ${path}`, { statuses });
    }
  }
  return operations;
}

const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ');

/** The document path of a route: its .json twin and its :params written as the document writes them. */
const documentPath = (routeUrl: string) => routeUrl.replace(/\.json$/, '').replace(/:(\w+)/g, '{$1}');

export const openapiConformance = fp<{ mode: ConformanceMode; document: () => OpenApiDocument }>(
  async (fastify, { mode, document }) => {
    let operations: Map<string, Operation> | undefined;
    const sent = new WeakMap<FastifyRequest, unknown>();

    // the object the handler (or the error handler) sent, before any serializer
    fastify.addHook('preSerialization', async (request, _reply, payload) => {
      sent.set(request, payload);
      return payload;
    });

    function problemsOf(request: FastifyRequest, reply: FastifyReply, payload: unknown): { route: string; problems: string[] } | undefined {
      const routeUrl = request.routeOptions.url;
      if (routeUrl === undefined || request.method === 'HEAD' || routeUrl === OPENAPI_PATH) return undefined;
      operations ??= compile(document());
      const route = `${request.method} ${documentPath(routeUrl)}`;
      const operation = operations.get(route);
      if (!operation) return routeUrl.startsWith('/api/v2/') ? { route, problems: ['the route is not in the OpenAPI document'] } : undefined;
      const status = String(reply.statusCode);
      const declared = operation.statuses.get(status);
      if (!declared) return { route, problems: [`status ${status} is not declared (declared: ${[...operation.statuses.keys()].join(', ')})`] };
      const problems: string[] = [];
      const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload === undefined || payload === null ? '' : undefined;
      if (text === undefined) return { route, problems: ['the body is a stream'] };
      if (!declared.validate) {
        if (text !== '') problems.push(`status ${status} declares no body, but one was sent: ${text.slice(0, 200)}`);
        return problems.length ? { route, problems } : undefined;
      }
      if (!/^application\/json\b/.test(String(reply.getHeader('content-type') ?? ''))) problems.push(`content-type ${String(reply.getHeader('content-type'))}, not application/json`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return { route, problems: [...problems, `the body is not JSON: ${text.slice(0, 200)}`] };
      }
      if (!declared.validate(parsed)) problems.push(`the body sent: ${describeErrors(declared.validate.errors)}`);
      if (sent.has(request)) {
        // what the handler meant to send, as plain JSON would carry it
        const meant = JSON.parse(JSON.stringify(sent.get(request)) ?? 'null') as unknown;
        if (!declared.validate(meant)) problems.push(`the object the handler answered (before serialization): ${describeErrors(declared.validate.errors)}`);
      }
      return problems.length ? { route, problems } : undefined;
    }

    fastify.addHook('onSend', async (request, reply, payload) => {
      const found = problemsOf(request, reply, payload);
      if (!found) return payload;
      const violation: OpenApiViolation = { request: `${request.method} ${request.url}`, route: found.route, status: reply.statusCode, problems: found.problems };
      if (mode === 'record') {
        ((globalThis as WithViolations)[VIOLATIONS] ??= []).push(violation);
        return payload;
      }
      request.log.error({ openapiViolation: violation }, 'answer not described by the OpenAPI document');
      reply.code(500).type('application/json; charset=utf-8');
      return JSON.stringify({ error: 'OpenApiViolation', description: `${violation.route} ${violation.status}: ${violation.problems.join(' | ')}` });
    });
  },
  { name: 'openapi-conformance' },
);
