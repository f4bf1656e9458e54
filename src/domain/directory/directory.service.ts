import type { PrismaClient } from '../../generated/prisma/client';
import { Prisma } from '../../generated/prisma/client';
import { ValidationError, Validator } from '../errors';
import { hashPassword } from '../auth/passwords';
import { toE164 } from '../phone';
import type { Role } from '../auth/viewer';

// Accounts, users, voice phone numbers and groups: managed by the CLI (API.md §9),
// read by GraphQL. Every read is scoped to one account.

/** subdomain: the account's host, {subdomain}.<PUBLIC_URL's host> (src/http/request-context.ts) */
export interface AccountRecord { id: bigint; name: string; subdomain: string; omnichannelRouting: boolean; createdAt: Date }

/** An account's subdomain: one DNS label, lower case (the accounts_subdomain_format check of the database). */
export const SUBDOMAIN_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
export interface UserRecord { id: bigint; accountId: bigint; name: string; email: string; role: Role; active: boolean; createdAt: Date }
export interface PhoneNumberRecord { id: bigint; accountId: bigint; number: string; callbackEnabled: boolean; createdAt: Date }
export interface GroupRecord { id: bigint; accountId: bigint; name: string; createdAt: Date }

const ROLES: readonly Role[] = ['admin', 'agent', 'end_user'];
const USER_FIELDS = { id: true, accountId: true, name: true, email: true, role: true, active: true, createdAt: true } as const;

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}

export class DirectoryService {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Without a subdomain, the database derives one from the name (its slug, with the
   * id appended when taken: prisma/functions/account_subdomain_for.sql).
   */
  async createAccount(name: string, subdomain?: string): Promise<AccountRecord> {
    const v = new Validator();
    const trimmed = name.trim();
    if (!trimmed) v.add('name', 'BlankValue', 'Name: cannot be blank');
    else if (trimmed.length > 255) v.add('name', 'TooLong', 'Name: is too long (maximum is 255 characters)');
    const sub = subdomain?.trim().toLowerCase();
    if (sub !== undefined) {
      if (!sub) v.add('subdomain', 'BlankValue', 'Subdomain: cannot be blank');
      else if (sub.length > 63) v.add('subdomain', 'TooLong', 'Subdomain: is too long (maximum is 63 characters)');
      else if (!SUBDOMAIN_PATTERN.test(sub)) {
        v.add('subdomain', 'InvalidValue', `Subdomain: ${sub} must be letters a-z, digits and "-", neither first nor last`);
      }
    }
    v.throwIfAny();
    try {
      return await this.prisma.account.create({ data: sub === undefined ? { name: trimmed } : { name: trimmed, subdomain: sub } });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (sub !== undefined && !(await this.prisma.account.findUnique({ where: { name: trimmed }, select: { id: true } }))) {
        throw new ValidationError({ subdomain: [{ error: 'InvalidValue', description: `Subdomain: ${sub} is already taken` }] });
      }
      throw new ValidationError({ name: [{ error: 'InvalidValue', description: `Name: ${trimmed} is already taken` }] });
    }
  }

  listAccounts(): Promise<AccountRecord[]> {
    return this.prisma.account.findMany({ orderBy: { id: 'asc' } });
  }

  async setOmnichannelRouting(accountId: bigint, enabled: boolean): Promise<AccountRecord> {
    await this.requireAccount(accountId);
    return this.prisma.account.update({ where: { id: accountId }, data: { omnichannelRouting: enabled } });
  }

  async createUser(input: { accountId: bigint; email: string; password: string; role: string; name?: string }): Promise<UserRecord> {
    const v = new Validator();
    const email = input.email.trim();
    if (!email) v.add('email', 'BlankValue', 'Email: cannot be blank');
    else if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254) v.add('email', 'InvalidValue', `Email: ${email} is not properly formatted`);
    if (input.password.length < 8) v.add('password', 'InvalidValue', 'Password: must be at least 8 characters');
    if (input.password.length > 1024) v.add('password', 'TooLong', 'Password: is too long (maximum is 1024 characters)');
    if (!ROLES.includes(input.role as Role)) v.add('role', 'InvalidValue', 'Role: must be one of admin, agent, end_user');
    const name = (input.name ?? email.split('@')[0]).trim();
    if (name.length > 255) v.add('name', 'TooLong', 'Name: is too long (maximum is 255 characters)');
    v.throwIfAny();
    await this.requireAccount(input.accountId);
    const passwordHash = await hashPassword(input.password);
    try {
      return await this.prisma.user.create({
        data: { accountId: input.accountId, email, emailKey: email.toLowerCase(), name: name || email, role: input.role as Role, passwordHash },
        select: USER_FIELDS,
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ValidationError({ email: [{ error: 'InvalidValue', description: `Email: ${email} is already being used by another user` }] });
      throw err;
    }
  }

  listUsers(accountId?: bigint): Promise<UserRecord[]> {
    return this.prisma.user.findMany({ where: accountId === undefined ? {} : { accountId }, orderBy: { id: 'asc' }, select: USER_FIELDS });
  }

  /** Users by id within one account, for DataLoader batching. */
  findUsers(accountId: bigint, ids: readonly bigint[]): Promise<UserRecord[]> {
    return this.prisma.user.findMany({ where: { accountId, id: { in: [...ids] } }, select: USER_FIELDS });
  }

  findAccount(id: bigint): Promise<AccountRecord | null> {
    return this.prisma.account.findUnique({ where: { id } });
  }

  findUser(accountId: bigint, id: bigint): Promise<UserRecord | null> {
    return this.prisma.user.findFirst({ where: { accountId, id }, select: USER_FIELDS });
  }

  async createPhoneNumber(input: { accountId: bigint; number: string; callbackEnabled: boolean }): Promise<PhoneNumberRecord> {
    const number = toE164(input.number);
    if (!number) throw new ValidationError({ number: [{ error: 'InvalidValue', description: `Number: ${input.number} is not a valid E.164 phone number` }] });
    await this.requireAccount(input.accountId);
    try {
      return await this.prisma.voicePhoneNumber.create({ data: { accountId: input.accountId, number, callbackEnabled: input.callbackEnabled } });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ValidationError({ number: [{ error: 'InvalidValue', description: `Number: ${number} already exists in this account` }] });
      throw err;
    }
  }

  listPhoneNumbers(accountId?: bigint): Promise<PhoneNumberRecord[]> {
    return this.prisma.voicePhoneNumber.findMany({ where: accountId === undefined ? {} : { accountId }, orderBy: { id: 'asc' } });
  }

  async createGroup(input: { accountId: bigint; name: string }): Promise<GroupRecord> {
    const name = input.name.trim();
    if (!name) throw new ValidationError({ name: [{ error: 'BlankValue', description: 'Name: cannot be blank' }] });
    if (name.length > 255) throw new ValidationError({ name: [{ error: 'TooLong', description: 'Name: is too long (maximum is 255 characters)' }] });
    await this.requireAccount(input.accountId);
    return this.prisma.group.create({ data: { accountId: input.accountId, name } });
  }

  listGroups(accountId?: bigint): Promise<GroupRecord[]> {
    return this.prisma.group.findMany({ where: accountId === undefined ? {} : { accountId }, orderBy: { id: 'asc' } });
  }

  private async requireAccount(id: bigint): Promise<void> {
    const found = await this.prisma.account.findUnique({ where: { id }, select: { id: true } });
    if (!found) throw new ValidationError({ account: [{ error: 'NotFound', description: `Account: ${id} does not exist` }] });
  }
}
