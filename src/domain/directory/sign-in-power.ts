import { authorizeUnscoped } from '../authorization';
import type { Role, Viewer } from '../auth/viewer';
import { isViewer, type Acting } from './acting';

// Which user changes hand out sign-in power, and so need a credential that scopes
// do not limit (authorizeUnscoped; docs/api.md "Users"). The CLI and the system
// act without a viewer, and are never refused.

/** Creating an admin, or any user with a password (someone will sign in with it). */
export function checkCreate(acting: Acting, role: Role | undefined, withPassword: boolean): void {
  if (isViewer(acting) && (role === 'admin' || withPassword)) authorizeUnscoped(acting);
}

/** An update that asks for the admin role. */
export function checkUpdate(acting: Acting, role: Role | undefined): void {
  if (isViewer(acting) && role === 'admin') authorizeUnscoped(acting);
}

/** Setting another user's password (your own needs the previous one instead). */
export function checkSetPassword(viewer: Viewer, own: boolean): void {
  if (!own) authorizeUnscoped(viewer);
}
