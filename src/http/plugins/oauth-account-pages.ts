import type { FastifyInstance } from 'fastify';
import type { Services } from '../../domain/services';
import type { PageSessions } from '../pages/page-session';

/** /oauth/logout and /oauth/authorized_apps (built next). */
export function accountPagesRoutes(_fastify: FastifyInstance, _services: Services, _kit: PageSessions) {}
