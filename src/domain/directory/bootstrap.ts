import { systemActor } from '../audit/audit-log.repository';
import { generatePassword } from '../auth/passwords';
import type { AccountService } from './account.service';
import type { UserService } from './user.service';

export interface BootstrapResult {
  created: boolean;
  email?: string;
  /** set only when the password was generated here (to be shown once) */
  generatedPassword?: string;
}

/**
 * On a database with no user at all: account "default" and an admin in it.
 * Callers run it under the migration lock, so concurrent starters create it once.
 * Both changes are the system's own (audit via 'system'). The services are
 * the composition root's (createServices), as the server's are.
 */
export async function bootstrapAdmin(
  { accounts, users }: { accounts: AccountService; users: UserService },
  options: { email: string; password?: string },
): Promise<BootstrapResult> {
  if (await users.anyUser()) return { created: false };
  const account = (await accounts.findByName('default')) ?? (await accounts.create('default', undefined, { via: 'system' }));
  const password = options.password ?? generatePassword();
  await users.create(systemActor(account.id, { via: 'system' }), { email: options.email, password, role: 'admin', name: 'Administrator' });
  return { created: true, email: options.email, generatedPassword: options.password ? undefined : password };
}
