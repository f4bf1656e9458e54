import type { AuthChecker } from 'type-graphql';
import { authorize } from '../domain/authorization';
import type { Role } from '../domain/auth/viewer';
import type { GraphQLContext } from './context';

/**
 * @Authorized('admin') etc.: the roles come from the decorator, the access from
 * the operation (query = read, mutation = write). Throws the domain error itself
 * so that the code reaches the client unchanged.
 */
export const authChecker: AuthChecker<GraphQLContext, Role> = ({ context, info }, roles) => {
  authorize(context.viewer, { roles, access: info.operation.operation === 'query' ? 'read' : 'write' });
  return true;
};
