import type { FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { badRequest, envelopeFor, internalError, notFound, type ErrorResponse } from '../error-envelope';
import { isValidationError, validationEnvelope } from '../../rest/validation';

export const BODY_LIMIT = 64 * 1024;

export function sendError(reply: FastifyReply, r: ErrorResponse) {
  if (r.headers) reply.headers(r.headers);
  return reply.code(r.status).type('application/json; charset=utf-8').send(r.body);
}

/** Every error, ours or Fastify's, in Zendesk's envelope (docs/api.md, "Errors"); a 5xx never shows its message. */
export const errorEnvelope = fp(async (fastify) => {
  fastify.setErrorHandler((error, request, reply) => {
    // A request that its route's schema refused (REST): 404 for a path id, 400 for a query parameter, 422 for a field
    if (isValidationError(error)) return sendError(reply, validationEnvelope(error, request.routeOptions.schema));
    const mapped = envelopeFor(error);
    if (mapped) return sendError(reply, mapped);
    const e = error as { code?: string; statusCode?: number; message?: string };
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(reply, { status: 413, body: { error: 'PayloadTooLarge', description: `Request bodies are limited to ${BODY_LIMIT} bytes` } });
    }
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendError(reply, { status: 415, body: { error: 'UnsupportedMediaType', description: 'Request bodies must be application/json' } });
    }
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      const description = e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError ? 'The request body is not valid JSON' : 'The request is malformed';
      return sendError(reply, badRequest(description));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, internalError());
  });
  fastify.setNotFoundHandler((_request, reply) => sendError(reply, notFound()));
}, { name: 'error-envelope' });
