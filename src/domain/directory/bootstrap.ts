import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../../generated/prisma/client';
import { DirectoryService } from './directory.service';

export interface BootstrapResult {
  created: boolean;
  email?: string;
  /** set only when the password was generated here (to be shown once) */
  generatedPassword?: string;
}

/**
 * On a database with no user at all: account "default" and an admin in it.
 * Callers run it under the migration lock, so concurrent starters create it once.
 */
export async function bootstrapAdmin(
  prisma: PrismaClient,
  options: { email: string; password?: string },
): Promise<BootstrapResult> {
  if ((await prisma.user.count()) > 0) return { created: false };
  const directory = new DirectoryService(prisma);
  const account =
    (await prisma.account.findUnique({ where: { name: 'default' } })) ?? (await directory.createAccount('default'));
  const password = options.password ?? randomBytes(12).toString('base64url');
  await directory.createUser({ accountId: account.id, email: options.email, password, role: 'admin', name: 'Administrator' });
  return { created: true, email: options.email, generatedPassword: options.password ? undefined : password };
}
