import { Extensions } from 'type-graphql';
import { defaultFieldResolver, isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { authorize, describePermission, isPermission, type Permission } from '../domain/authorization';
import type { GraphQLContext } from './context';

/**
 * `@Allow('oauthClients.read')` on a root field or on a field that returns
 * records: the permission is kept in the field's extensions, where the REST
 * adapter (pre-authorization) and the tests read it, and `authorizeFields` makes
 * the field ask the policy before its resolver runs.
 */
export function Allow(permission: Permission): PropertyDecorator & MethodDecorator {
  if (!isPermission(permission)) throw new Error(`unknown permission ${String(permission)}`);
  return Extensions({ permission }) as PropertyDecorator & MethodDecorator;
}

/**
 * Wraps, once at start-up, the resolver of every field that carries a permission
 * with a call of the policy (domain/authorization.ts), which throws the domain
 * error itself so that its code reaches the client unchanged.
 *
 * This was type-graphql's `@Authorized` with an auth checker, which runs as a
 * resolver middleware: three async functions and their promises per field call,
 * 200 calls on a page of 100 tokens with their client and user, and 30 % of what
 * such a page allocated (bench/tuning-log.md). The check is the same, made
 * synchronously, before the resolver.
 */
export function authorizeFields(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const permission = field.extensions?.permission;
      if (permission === undefined) continue;
      if (!isPermission(permission)) throw new Error(`${type.name}.${field.name}: unknown permission ${String(permission)}`);
      const resolve: GraphQLFieldResolver<unknown, GraphQLContext> = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: GraphQLContext, info) => {
        authorize(context.viewer, permission);
        return resolve(source, args, context, info);
      };
    }
  }
}

/**
 * Appends who may use each field that carries a permission (roles, and what a token
 * needs) to the description written where the field is declared. A field without a
 * description gets none here: it still fails the schema lint (docs/graphql.md).
 */
export function describeAccess(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const permission = field.extensions?.permission;
      if (!field.description || !isPermission(permission)) continue;
      field.description = `${field.description.replace(/\.?$/, '.')} ${describePermission(permission)}`;
    }
  }
}
