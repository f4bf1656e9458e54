import fp from 'fastify-plugin';

/** The request id on every answer, and one log line per request: method, path, status, time, id. Never headers or bodies. */
export const requestLog = fp(async (fastify) => {
  fastify.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  fastify.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
}, { name: 'request-log' });
