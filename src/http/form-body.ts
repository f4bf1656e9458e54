import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';

/** A form body's parameters; a repeated name becomes an array (refused later where one value is expected). */
type FormParams = Record<string, string | string[]>;

/**
 * Accepts application/x-www-form-urlencoded bodies (RFC 6749 Appendix B; HTML
 * forms) on the routes of an encapsulated plugin, the rest of the service staying
 * JSON-only. A body that is not UTF-8 fails with `invalid(message)`, the error
 * the plugin's own error handler answers as it should (OAuth JSON, or a page).
 */
export function acceptForms(fastify: FastifyInstance, invalid: (message: string) => Error, bodyLimit?: number): void {
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', ...(bodyLimit ? { bodyLimit } : {}) }, (_request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) return done(invalid('The request body is not valid UTF-8'), undefined);
    const params: FormParams = Object.create(null);
    for (const [name, value] of new URLSearchParams(bytes.toString('utf8'))) {
      const seen = params[name];
      params[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    done(null, params);
  });
}
