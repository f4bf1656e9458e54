import { Authorized, Extensions, type AuthChecker } from 'type-graphql';
import { authorize, isPermission, type Permission } from '../domain/authorization';
import type { GraphQLContext } from './context';

/**
 * `@Allow('oauthClients.read')` on a root field or on a field that returns
 * records: type-graphql runs the auth checker with that permission before the
 * resolver, and the permission is kept in the field's extensions, where the REST
 * adapter (pre-authorization) and the tests read it.
 */
export function Allow(permission: Permission): PropertyDecorator & MethodDecorator {
  const authorized = Authorized<Permission>(permission);
  const extensions = Extensions({ permission });
  return ((target: object, key: string | symbol, descriptor?: PropertyDescriptor) => {
    authorized(target, key, descriptor as never);
    extensions(target, key, descriptor as never);
  }) as PropertyDecorator & MethodDecorator;
}

/**
 * Asks the policy (domain/authorization.ts). Throws the domain error itself so
 * that its code reaches the client unchanged.
 */
export const authChecker: AuthChecker<GraphQLContext, Permission> = ({ context }, permissions) => {
  for (const permission of permissions) {
    if (!isPermission(permission)) throw new Error(`unknown permission ${String(permission)}`);
    authorize(context.viewer, permission);
  }
  return true;
};
