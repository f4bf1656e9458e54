import { tenantTransaction } from '../../db/tenant-sql';
import type { Repositories, RepositoryFactory, Transactions } from '../repositories';
import { recordAudit, type AuditActor } from '../audit/audit-log.repository';
import { changeEvent, userDetail } from '../events/event-details';
import { usersVisibleTo, type AccountScope } from '../authorization';
import { hashPassword } from '../auth/passwords';
import type { Role, Viewer } from '../auth/viewer';
import { NotFoundError, Validator } from '../errors';
import { parseId } from '../ids';
import { checkOffsetPage, fromTheEnd, type PageSource } from '../pagination';
import { auditActorOf, booleanField, changedFields, scopeOf, textField, type Acting } from './acting';
import { checkCreate, checkUpdate } from './sign-in-power';
import { emailField, emailTaken, isUniqueViolation, lastAdmin, passwordField, plural, roleField, ROLES } from './user-fields';
import { kdfTurnOf, type UserPasswordService } from './user-password.service';
import { membershipsRemovedEntries } from '../voice/group-membership.service';
import { UNUSABLE_PASSWORD_HASH, type UserRepository, type SignedInUserRecord, type UserChanges, type UserRecord } from './user.repository';

export type { UserRecord } from './user.repository';

export interface CreateUserInput {
  name?: unknown;
  email?: unknown;
  role?: unknown;
  /** optional: without one the user cannot sign in with Basic until one is set */
  password?: unknown;
}

export interface UpdateUserInput {
  name?: unknown;
  email?: unknown;
  role?: unknown;
  active?: unknown;
}

/** REST names of the writable fields (the audit log's changed_fields) → record keys */
const FIELD_NAMES = { name: 'name', email: 'email', role: 'role', active: 'active' } as const;


/**
 * Users of an account (docs/api.md "Users"): validation, the last-admin rule, and what
 * deactivating takes with it. Admins manage the account's users; anyone reads
 * and changes the password of themselves (usersVisibleTo). Every change writes
 * its audit record in the change's transaction.
 */
export class UserService {
  /** `passwords`: setting passwords (user-password.service.ts), with the login throttle a previous password's check goes through. */
  constructor(
    private readonly db: Transactions,
    private readonly users: UserRepository,
    private readonly repos: RepositoryFactory,
    private readonly passwords: UserPasswordService,
  ) {}

  async find(viewer: Viewer, rawId: unknown): Promise<UserRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.users.find(usersVisibleTo(viewer), id);
  }

  /** Users by id that the viewer may see, for DataLoader batching. */
  findMany(viewer: Viewer, ids: readonly bigint[]): Promise<UserRecord[]> {
    const scope = usersVisibleTo(viewer);
    const visible = scope.id === undefined ? ids : ids.filter((id) => id === scope.id);
    return visible.length ? this.users.findMany(scope, visible) : Promise.resolve([]);
  }

  /** A user of a known account, with when their password last changed (the authorization pages' signed-in user). */
  findInAccount(scope: AccountScope, id: bigint): Promise<SignedInUserRecord | null> {
    return this.users.findSignedIn(scope, id);
  }

  /** The users the viewer may list (of one role), id ascending, for readPage(). */
  pages(viewer: Viewer, role: Role | undefined): PageSource<UserRecord> {
    const scope = usersVisibleTo(viewer);
    return {
      keyset: (page) => this.users.listKeyset(scope, role, fromTheEnd(page)),
      offset: (page) => {
        checkOffsetPage(page);
        return this.users.listOffset(scope, role, page);
      },
      count: () => this.users.count(scope, role),
    };
  }

  /** Every user of an account, id ascending (the CLI). */
  async listOfAccount(scope: AccountScope): Promise<UserRecord[]> {
    const out: UserRecord[] = [];
    for (let page = 1; ; page++) {
      const rows = await this.users.listOffset(scope, undefined, { page, perPage: 1000 });
      out.push(...rows);
      if (rows.length < 1000) return out;
    }
  }

  /** Whether the database holds any user (the first start creates an admin when not). */
  anyUser(): Promise<boolean> {
    return this.users.anyUser();
  }

  async create(acting: Acting, input: CreateUserInput): Promise<UserRecord> {
    const v = new Validator();
    const name = textField(v, 'name', 'Name', input.name, { required: true, max: 255 });
    const email = emailField(v, input.email, true);
    const role = input.role === undefined || input.role === null ? 'end_user' : roleField(v, input.role);
    const password = passwordField(v, 'password', 'Password', input.password, false);
    v.throwIfAny();
    checkCreate(acting, role, password !== undefined);
    const passwordHash = password === undefined ? UNUSABLE_PASSWORD_HASH : await hashPassword(password, kdfTurnOf(acting));
    return tenantTransaction(this.db, async (sql) => {
      const user = await this.repos(sql).users.insert(scopeOf(acting), { name: name!, email: email!, role: role!, passwordHash });
      if (!user) throw emailTaken(email!);
      await recordAudit(sql, auditActorOf(acting), {
        action: 'create', sourceType: 'user', sourceId: user.id, sourceLabel: user.name,
        changedFields: ['name', 'email', 'role', ...(password === undefined ? [] : ['password'])],
        description: `Created ${user.role} ${user.email}${password === undefined ? ' without a password' : ''}`,
        event: { name: 'user.created', subject: `user:${user.id}`, detail: userDetail(user) },
      });
      return user;
    });
  }

  /**
   * A partial update of name, email, role and active (admins). Deactivating
   * revokes every token and grant of the user in the same transaction; the last
   * active admin of the account can be neither demoted nor deactivated.
   */
  async update(acting: Acting, rawId: unknown, input: UpdateUserInput): Promise<UserRecord> {
    const id = parseId(rawId) ?? notFound();
    const v = new Validator();
    const changes: UserChanges = {
      name: textField(v, 'name', 'Name', input.name, { required: input.name !== undefined, max: 255 }) ?? undefined,
      email: emailField(v, input.email, input.email !== undefined),
      role: input.role === null ? (v.add('role', 'InvalidValue', `Role: must be one of ${ROLES.join(', ')}`), undefined) : roleField(v, input.role),
      active: input.active === null ? (v.add('active', 'InvalidValue', 'Active: must be true or false'), undefined) : booleanField(v, 'active', 'Active', input.active),
    };
    v.throwIfAny();
    checkUpdate(acting, changes.role);
    const scope = scopeOf(acting);
    return tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      const users = tx.users;
      const mayTouchAdmins = changes.role !== undefined || changes.active === false;
      const admins = mayTouchAdmins ? await users.lockActiveAdmins(scope) : [];
      const found = (await users.lock(scope, id)) ?? notFound();
      const current = found.user;
      const changed = changedFields(current, changes, FIELD_NAMES);
      if (changed.length === 0) return current;
      const demoted = changed.includes('role') && changes.role !== 'admin';
      const deactivated = changed.includes('active') && changes.active === false;
      if (current.role === 'admin' && current.active && (demoted || deactivated) && !admins.some((a) => a !== current.id)) {
        throw lastAdmin(deactivated ? 'active' : 'role');
      }
      if (changed.includes('email') && changes.email!.toLowerCase() !== current.email.toLowerCase() && (await users.emailTaken(scope, changes.email!, id))) {
        throw emailTaken(changes.email!);
      }
      const only = Object.fromEntries(changed.map((f) => [FIELD_NAMES[f as keyof typeof FIELD_NAMES], changes[FIELD_NAMES[f as keyof typeof FIELD_NAMES]]]));
      const updated = await this.updateRow(users, scope, id, only, changes.email);
      const revoked = deactivated ? await revokeAccess(tx, scope, id) : 0;
      // only active agents and admins are group members
      const leaves = deactivated ? 'the user was deactivated' : demoted && changes.role === 'end_user' ? 'the user became an end user' : undefined;
      const removed = leaves ? await tx.groupMemberships.deleteOf(scope, { userId: id }) : [];
      await recordAudit(sql, auditActorOf(acting), [
        {
          action: 'update', sourceType: 'user', sourceId: id, sourceLabel: updated.name, changedFields: changed,
          description: deactivated ? `Deactivated; ${plural(revoked, 'token')} revoked` : `Updated ${changed.join(', ')}`,
          event: {
            name: 'user.updated', subject: `user:${id}`, detail: userDetail(updated),
            event: { ...changeEvent(changed, userDetail(current), userDetail(updated)), ...(deactivated ? { revoked_token_count: revoked } : {}) },
          },
        },
        ...membershipsRemovedEntries(removed, leaves ?? ''),
      ]);
      return updated;
    });
  }

  /**
   * Zendesk's delete of a user: deactivation (the record stays, inactive), its
   * tokens and grants revoked in the same transaction. The last active admin
   * cannot be deleted. Deleting an inactive user changes nothing.
   */
  async delete(acting: Acting, rawId: unknown): Promise<UserRecord> {
    const id = parseId(rawId) ?? notFound();
    const scope = scopeOf(acting);
    return tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      const users = tx.users;
      const admins = await users.lockActiveAdmins(scope);
      const current = ((await users.lock(scope, id)) ?? notFound()).user;
      if (!current.active) return current;
      if (current.role === 'admin' && !admins.some((a) => a !== current.id)) throw lastAdmin('active');
      const updated = await this.updateRow(users, scope, id, { active: false });
      const revoked = await revokeAccess(tx, scope, id);
      const removed = await tx.groupMemberships.deleteOf(scope, { userId: id });
      await recordAudit(sql, auditActorOf(acting), [
        {
          action: 'destroy', sourceType: 'user', sourceId: id, sourceLabel: updated.name, changedFields: ['active'],
          description: `Deleted (deactivated); ${plural(revoked, 'token')} revoked`,
          // its tokens are revoked with it: counted here, not one oauth_token.revoked each (docs/api.md, "Events")
          event: { name: 'user.deleted', subject: `user:${id}`, detail: userDetail(updated), event: { revoked_token_count: revoked } },
        },
        ...membershipsRemovedEntries(removed, 'the user was deleted'),
      ]);
      return updated;
    });
  }

  /** Sets a password (user-password.service.ts). */
  setPassword(viewer: Viewer, rawId: unknown, password: unknown, previousPassword: unknown): Promise<void> {
    return this.passwords.setPassword(viewer, rawId, password, previousPassword);
  }

  /** The users with this email in every account, account id ascending (the CLI's password reset). */
  withEmailInAnyAccount(email: string): Promise<UserRecord[]> {
    return this.users.withEmailInAnyAccount(email.trim());
  }

  /** The operator's reset: a generated password, shown once (user-password.service.ts). */
  resetPassword(actor: AuditActor, userId: bigint): Promise<{ user: UserRecord; password: string; revokedTokens: number }> {
    return this.passwords.resetPassword(actor, userId);
  }

  private async updateRow(users: UserRepository, scope: AccountScope, id: bigint, changes: UserChanges, email?: string): Promise<UserRecord> {
    try {
      return (await users.update(scope, id, changes)) ?? notFound();
    } catch (err) {
      // two requests giving two users one email at once: the unique index decides
      if (isUniqueViolation(err)) throw emailTaken(email ?? '');
      throw err;
    }
  }
}

/** Every token and grant of the user, revoked on the transaction's connection (grants first: see OAuthGrantRepository.revoke). */
async function revokeAccess(tx: Repositories, scope: AccountScope, userId: bigint): Promise<number> {
  await tx.grants.revokeAllOfUser(scope, userId);
  return tx.tokens.revokeAllOfUser(scope, userId);
}

function notFound(): never {
  throw new NotFoundError();
}
