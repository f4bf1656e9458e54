import type { FastifyInstance } from 'fastify';
import type { Services } from '../../domain/services';
import { pageSessions } from '../pages/page-session';
import { authorizeRoutes } from './oauth-authorize';
import { accountPagesRoutes } from './oauth-account-pages';

export interface OAuthPagesOptions {
  services: Services;
  hashKey: Buffer;
  publicUrl?: string;
}

/**
 * Every page under /oauth that a person signs in to: the authorization pages
 * (login, consent), /oauth/logout and /oauth/authorized_apps, with one session and
 * CSRF rule (pages/page-session.ts). Encapsulated (not fastify-plugin): the form
 * parser, the cookie plugin and the pages' error handler stay inside these routes.
 */
export async function oauthPages(fastify: FastifyInstance, { services, hashKey, publicUrl }: OAuthPagesOptions) {
  const kit = await pageSessions(fastify, { services, hashKey, publicUrl });
  authorizeRoutes(fastify, services, kit);
  accountPagesRoutes(fastify, services, kit);
}
