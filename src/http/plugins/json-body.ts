import { isUtf8 } from 'node:buffer';
import fp from 'fastify-plugin';
import { BadRequestError } from '../../domain/errors';

/**
 * JSON only (anything else is 415, see errors.ts). The body must be UTF-8 (RFC 8259
 * §8.1; other bytes would be stored as U+FFFD); an empty body counts as no body
 * (e.g. POST …/client_secret with a JSON content type).
 */
export const jsonBody = fp(async (fastify) => {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  // application/merge-patch+json: what Zendesk's clients send to PATCH a webhook (RFC 7396), parsed the same way
  fastify.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'buffer' }, (req, body, done) => {
    if (!isUtf8(body as Buffer)) return done(new BadRequestError('The request body is not valid UTF-8'), undefined);
    const text = (body as Buffer).toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    parseJson(req, text, done);
  });
}, { name: 'json-body' });
