import type { Db } from '../db/create-db';
import { createServices } from '../domain/services';
import { buildApp } from '../app';
import { OAUTH_LIMIT_DEFAULTS } from '../config';

/**
 * docs/openapi.json: the document the app serves at /api/v2/openapi.json, pretty-printed.
 * Built from the app itself, over a database it never reaches (registering routes runs
 * no statement), so that `npm run openapi:emit` needs none.
 */
export async function printOpenApiFile(): Promise<string> {
  const db = {} as Db;
  const hashKey = Buffer.alloc(32);
  const { fastify } = await buildApp({
    db,
    services: createServices({ db, hashKey, limits: { loginFailures: 10, loginWindowSeconds: 300, callbackRequests: 30, callbackWindowSeconds: 600, ...OAUTH_LIMIT_DEFAULTS } }),
    config: {
      hashKey,
      graphqlIntrospection: true,
      logLevel: 'silent',
    },
    logger: false,
  });
  try {
    await fastify.ready();
    return `${JSON.stringify(fastify.swagger(), null, 2)}\n`;
  } finally {
    await fastify.close();
  }
}
