import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthenticatedError } from '../../domain/errors';
import { envelopeFor } from '../error-envelope';
import { AppMetrics, UNMATCHED_ROUTE } from '../app-metrics';
import { sendError } from './errors';

const METRICS_PATH = '/metrics';

/**
 * Who may scrape (docs/api.md, "Metrics"):
 * - METRICS_TOKEN set: whoever sends `Authorization: Bearer <it>`, in any environment;
 * - unset in production: nobody: /metrics does not exist (404), and nothing is measured;
 * - unset elsewhere: clients on loopback (a Prometheus on the same machine, curl).
 */
export type MetricsAccess = { kind: 'token'; digest: Buffer } | { kind: 'loopback' } | { kind: 'off' };

const digest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();

export function metricsAccess(config: { env?: string; metricsToken?: string }): MetricsAccess {
  if (config.metricsToken !== undefined) return { kind: 'token', digest: digest(config.metricsToken) };
  return config.env === 'production' ? { kind: 'off' } : { kind: 'loopback' };
}

/** The TCP peer (never X-Forwarded-For: a proxy on the same machine would make everyone local) is 127.0.0.0/8 or ::1. */
function fromLoopback(request: FastifyRequest): boolean {
  const peer = request.socket.remoteAddress ?? '';
  const v4 = peer.startsWith('::ffff:') ? peer.slice(7) : peer;
  return peer === '::1' || (isIP(v4) === 4 && v4.startsWith('127.'));
}

/** Whether the request carries the token (compared in constant time, as digests of equal length). */
function bearerMatches(request: FastifyRequest, expected: Buffer): boolean | undefined {
  const header = request.headers.authorization;
  const m = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  if (!m) return undefined;
  return timingSafeEqual(digest(m[1]), expected);
}

function refuse(reply: FastifyReply, given: boolean | undefined) {
  const answer = envelopeFor(new UnauthenticatedError('Bearer'))!;
  // RFC 6750 §3: no error code when no credentials came; invalid_token for a wrong one
  const challenge = given === undefined ? 'Bearer realm="metrics"' : 'Bearer realm="metrics", error="invalid_token"';
  return sendError(reply, { ...answer, headers: { 'www-authenticate': challenge } });
}

/**
 * GET /metrics in Prometheus's text format, and the hook that measures every answered
 * request (by its route pattern, never its URL: /metrics itself is left out, a scrape
 * is not traffic). Registered before the routes it measures; not in the OpenAPI
 * document (no tag), like /healthz.
 */
export const metrics = fp<{ access: MetricsAccess; metrics?: AppMetrics }>(async (fastify, { access, metrics: measured }) => {
  if (access.kind === 'off' || !measured) {
    fastify.log.info('GET /metrics is off: NODE_ENV=production and METRICS_TOKEN is unset; set METRICS_TOKEN (e.g. `openssl rand -hex 32`) and scrape with Authorization: Bearer <token>');
    return;
  }
  // callback style, no promise per request; reply.elapsedTime is Fastify's own clock
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    if (route !== METRICS_PATH) measured.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  fastify.get(METRICS_PATH, async (request, reply) => {
    if (access.kind === 'token') {
      const given = bearerMatches(request, access.digest);
      if (given !== true) return refuse(reply, given);
    } else if (!fromLoopback(request)) {
      return sendError(reply, envelopeFor(new ForbiddenError())!);
    }
    const text = await measured.scrape();
    return reply.header('cache-control', 'no-store').type(measured.contentType).send(text);
  });
}, { name: 'metrics' });
