import { tenantTransaction } from '../../db/tenant-sql';
import type { RepositoryFactory, Transactions } from '../repositories';
import type { Limits } from '../../config';
import { recordAudit, type AuditActor } from '../audit/audit-log.repository';
import { changeEvent, userDetail } from '../events/event-details';
import { usersVisibleTo } from '../authorization';
import { clientOf } from '../auth/client-address';
import { claimKdfTurn } from '../auth/kdf-queue';
import type { LoginAttempts } from '../auth/login-attempt';
import { loginEmailKey } from '../auth/login-keys';
import { generatePassword, hashPassword, verifyPassword } from '../auth/passwords';
import type { Viewer } from '../auth/viewer';
import { constantTimeEqual } from '../crypto';
import { NotFoundError, ValidationError, Validator } from '../errors';
import { parseId } from '../ids';
import { auditActorOf, isViewer, scopeOf, type Acting } from './acting';
import { endGrantsOfUser } from './password-change';
import { checkSetPassword } from './sign-in-power';
import { passwordField, plural } from './user-fields';
import type { UserRecord, UserRepository, UserScope } from './user.repository';

/**
 * The KDF queue's place of whoever acts: a request's caller by its address, like a
 * Basic login (so an admin setting passwords in a loop holds only its share of the
 * queue and gets 503 when it is full); the CLI and the system, never refused.
 */
export function kdfTurnOf(acting: Acting) {
  const address = clientAddressOf(acting);
  return claimKdfTurn(address === undefined ? undefined : clientOf(address));
}

function clientAddressOf(acting: Acting): string | undefined {
  return isViewer(acting) ? acting.origin?.ipAddress : undefined;
}

/** The login throttle a previous password's check goes through, as a Basic login does (the server's; the CLI changes no password). */
export interface PasswordGuard {
  attempts: LoginAttempts;
  hashKey: Buffer;
  limits: Pick<Limits, 'loginFailures'>;
}

function notFound(): never {
  throw new NotFoundError();
}

const wrongPrevious = () => new ValidationError({ previous_password: [{ error: 'InvalidValue', description: 'Previous password: is not correct' }] });

/** Setting a user's password: one's own with the previous one, or (admins) another user's. */
export class UserPasswordService {
  constructor(
    private readonly db: Transactions,
    private readonly users: UserRepository,
    private readonly repos: RepositoryFactory,
    private readonly guard?: PasswordGuard,
  ) {}

  /**
   * Sets a password. Anyone sets their own with the right `previousPassword`
   * (verified with the KDF); admins set another user's of their account without
   * it (usersVisibleTo: anyone else's id is not found).
   */
  async setPassword(viewer: Viewer, rawId: unknown, password: unknown, previousPassword: unknown): Promise<void> {
    const id = parseId(rawId);
    const scope = usersVisibleTo(viewer);
    const found = id === null ? null : await this.users.lock(scope, id, false);
    if (!found) notFound();
    const own = found.user.id === viewer.userId && viewer.impersonatorId === undefined;
    checkSetPassword(viewer, own);
    const v = new Validator();
    const next = passwordField(v, 'password', 'Password', password, true);
    const previous = own ? passwordField(v, 'previous_password', 'Previous password', previousPassword, true) : undefined;
    v.throwIfAny();
    if (own && !(await this.verifyPrevious(viewer, found.user, found.passwordHash, previous!))) throw wrongPrevious();
    const passwordHash = await hashPassword(next!, kdfTurnOf(viewer));
    await this.store(viewer, scope, found.user.id, passwordHash, own ? 'Changed their password' : 'Password set by an admin', own ? found.passwordHash : undefined);
  }

  /**
   * The operator's reset (`npm run cli -- user reset-password`): a generated password
   * (as the first admin's), stored, audited and ending what the old one opened as an
   * admin's set does. Returns it, to be shown once; and how many tokens it revoked.
   */
  async resetPassword(actor: AuditActor, userId: bigint): Promise<{ user: UserRecord; password: string; revokedTokens: number }> {
    const password = generatePassword();
    const passwordHash = await hashPassword(password, kdfTurnOf(actor));
    const { user, revoked } = await this.store(actor, scopeOf(actor), userId, passwordHash, 'Password reset from the CLI');
    return { user, password, revokedTokens: revoked };
  }

  /**
   * Stores a new password hash in one transaction with what it ends and its audit
   * record and event. `verifiedHash`: the hash a previous password was checked
   * against, which must still be the current one (a change meanwhile refuses).
   */
  private store(acting: Acting, scope: UserScope, userId: bigint, passwordHash: string, what: string, verifiedHash?: string): Promise<{ user: UserRecord; revoked: number }> {
    const actor = auditActorOf(acting);
    return tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      const locked = (await tx.users.lock(scope, userId)) ?? notFound();
      // Changed meanwhile: the previous password that was verified is no longer the current one.
      if (verifiedHash !== undefined && !constantTimeEqual(locked.passwordHash, verifiedHash)) throw wrongPrevious();
      const user = (await tx.users.setPasswordHash(scopeOf(acting), userId, passwordHash)) ?? notFound();
      // a new password ends what the old one opened: the user's grants and their tokens, and (by its stamp) every sign-in session
      const revoked = await endGrantsOfUser(sql, tx, actor, scopeOf(acting), userId);
      await recordAudit(sql, actor, {
        action: 'update', sourceType: 'user', sourceId: userId, sourceLabel: locked.user.name, changedFields: ['password'],
        description: `${what}${revoked > 0 ? `; ${plural(revoked, 'token')} revoked` : ''}`,
        // the password's value is never shown: its name only, and the grant tokens it ended (not one oauth_token.revoked each)
        event: { name: 'user.updated', subject: `user:${userId}`, detail: userDetail(locked.user), event: { ...changeEvent(['password'], {}, {}), revoked_token_count: revoked } },
      });
      return { user, revoked };
    });
  }

  /**
   * A previous password is guessed like a Basic login (docs/api.md "Authentication"),
   * through the same protocol (login-attempt.ts): counted in the failed-login window
   * of the user's (account, email) — the same count as Basic's there —, one KDF in
   * the caller's place of the KDF queue (full: 503, not counted), and a success
   * clears the count. So a token that may change its user's password cannot guess
   * that password faster than the login page could.
   */
  private async verifyPrevious(viewer: Viewer, user: UserRecord, passwordHash: string, previous: string): Promise<boolean> {
    const guard = this.guard;
    if (!guard) return verifyPassword(previous, passwordHash);
    const address = clientAddressOf(viewer);
    return guard.attempts.attempt({
      windows: [{ key: loginEmailKey(guard.hashKey, user.accountId, user.email.trim().toLowerCase()), limit: guard.limits.loginFailures }],
      client: address === undefined ? undefined : clientOf(address),
      verify: (turn) => verifyPassword(previous, passwordHash, turn),
      throttled: 'Too many failed password attempts; try again later',
    });
  }
}
