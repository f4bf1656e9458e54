import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/create-db';
import { systemActor } from '../audit/audit-log.repository';
import { AccountService } from './account.service';
import { UserService } from './user.service';

export interface BootstrapResult {
  created: boolean;
  email?: string;
  /** set only when the password was generated here (to be shown once) */
  generatedPassword?: string;
}

/**
 * On a database with no user at all: account "default" and an admin in it.
 * Callers run it under the migration lock, so concurrent starters create it once.
 * Both changes are the system's own (audit via 'system').
 */
export async function bootstrapAdmin(db: Pick<Db, 'sql' | 'transaction'>, options: { email: string; password?: string }): Promise<BootstrapResult> {
  const users = new UserService(db);
  if (await users.anyUser()) return { created: false };
  const accounts = new AccountService(db);
  const account = (await accounts.findByName('default')) ?? (await accounts.create('default', undefined, { via: 'system' }));
  const password = options.password ?? randomBytes(12).toString('base64url');
  await users.create(systemActor(account.id, { via: 'system' }), { email: options.email, password, role: 'admin', name: 'Administrator' });
  return { created: true, email: options.email, generatedPassword: options.password ? undefined : password };
}
