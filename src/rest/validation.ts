import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { ValidationError, type ValidationDetails } from '../domain/errors';
import { badRequest, envelopeFor, notFound, type ErrorResponse } from '../http/error-envelope';
import { INVALID } from './schemas';

// Request validation of the /api/v2 routes from their schemas (src/rest/schemas.ts),
// with Ajv instances of our own (RestRoute routes set them as their validatorCompiler):
//  - bodies: never coerced (a number where a string belongs is a 422, not "123"), every
//    error at once, `null` (Fastify's stand-in for "no body") valid;
//  - query strings and path parameters: not coerced by Ajv either, whose coercion reads
//    " 2", "1e3" and "0x10" as integers; coerceQuery() turns digits into integers and
//    true/false into booleans, and leaves the rest for the schema to refuse.

function newAjv(options: ConstructorParameters<typeof Ajv>[0]): Ajv {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, coerceTypes: false, useDefaults: false, removeAdditional: false, ...options });
  ajv.addKeyword({ keyword: INVALID, schemaType: 'string' });
  return ajv;
}

const bodyAjv = newAjv({ allErrors: true });
const paramAjv = newAjv({ allErrors: false });

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Integers as digits, booleans as true/false, in place: the strict reading of query strings. */
function queryCoercion(schema: { properties?: Record<string, { type?: unknown }> }): (query: Record<string, unknown>) => void {
  const integers: string[] = [];
  const booleans: string[] = [];
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    if (s.type === 'integer') integers.push(name);
    if (s.type === 'boolean') booleans.push(name);
  }
  return (query) => {
    for (const name of integers) {
      const v = query[name];
      if (typeof v === 'string' && /^-?[0-9]{1,15}$/.test(v)) query[name] = Number(v);
    }
    for (const name of booleans) {
      const v = query[name];
      if (v === 'true' || v === 'false') query[name] = v === 'true';
    }
  };
}

/** The validatorCompiler of every REST route (per httpPart). */
export const restValidatorCompiler: FastifySchemaCompiler<FastifySchema> = ({ schema, httpPart }) => {
  if (httpPart === 'body') {
    const validate = bodyAjv.compile(schema as object);
    // Fastify hands a missing body over as null (an explicit JSON null was refused before).
    const fn: Validator = (data) => {
      const ok = data === null || validate(data);
      fn.errors = validate.errors;
      return ok;
    };
    return fn;
  }
  const validate: ValidateFunction = paramAjv.compile(schema as object);
  const coerce = httpPart === 'querystring' ? queryCoercion(schema as never) : undefined;
  const fn: Validator = (data) => {
    coerce?.(data as Record<string, unknown>);
    const ok = validate(data);
    fn.errors = validate.errors;
    return ok;
  };
  return fn;
};

// ---------------------------------------------------------------- errors

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  [INVALID]?: string;
}

const segments = (pointer: string) => (pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')));

/** The deepest schema on the path that names its error: its key, and its description. */
function describe(schema: SchemaNode | undefined, path: string[]): { key: string; description: string } | undefined {
  let node = schema;
  let found: { key: string; description: string } | undefined;
  for (const segment of path) {
    node = node?.properties?.[segment] ?? (/^\d+$/.test(segment) ? node?.items : undefined);
    if (!node) break;
    if (node[INVALID]) found = { key: segment, description: node[INVALID] };
  }
  return found;
}

export interface FastifyValidationError {
  validation: ErrorObject[];
  validationContext: 'body' | 'params' | 'querystring' | 'headers';
}

export function isValidationError(err: unknown): err is FastifyValidationError {
  return !!err && typeof err === 'object' && Array.isArray((err as FastifyValidationError).validation) && typeof (err as FastifyValidationError).validationContext === 'string';
}

/**
 * Fastify's validation error in Zendesk's envelope (docs/api.md, "Errors"): a path parameter → 404;
 * a query parameter → 400 naming it; a body that is not an object → 400; a field → 422
 * with `details`, every field at once, each described by its schema's `x-invalid`.
 */
export function validationEnvelope(err: FastifyValidationError, schema: FastifySchema | undefined): ErrorResponse {
  switch (err.validationContext) {
    case 'params':
      return notFound();
    case 'querystring': {
      const first = err.validation[0];
      const path = segments(first?.instancePath ?? '');
      const name = path[0];
      if (name === undefined) return badRequest('The query string is malformed');
      return badRequest(describe(schema?.querystring as SchemaNode, path)?.description ?? `${name} is invalid`);
    }
    case 'body': {
      if (err.validation.some((e) => e.instancePath === '')) return badRequest('The request body must be a JSON object');
      const details: ValidationDetails = {};
      for (const e of err.validation) {
        const path = segments(e.instancePath);
        const found = describe(schema?.body as SchemaNode, path) ?? { key: path[0], description: `${path[0]}: is invalid` };
        details[found.key] ??= [{ error: 'InvalidValue', description: found.description }];
      }
      return envelopeFor(new ValidationError(details))!;
    }
    default:
      return badRequest('The request is malformed');
  }
}
