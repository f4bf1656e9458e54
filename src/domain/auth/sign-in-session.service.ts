import { hmacHex, randomUrlSafe } from '../crypto';
import type { SignInSessionRepository } from './sign-in-session.repository';

/** How long a sign-in session of the pages under /oauth lives from its sign-in (docs/api.md, "Sign-in sessions"). */
export const SESSION_SECONDS = 15 * 60;

/** What the session cookie carries: the account (where to look) and a random value (256 bits; only its keyed hash is stored). */
const VALUE = /^(\d{1,19})\.([\w-]{43})$/;
const INT8_MAX = 9_223_372_036_854_775_807n;

/** The account and the random value of a cookie's value; undefined when it is not one (never a database error). */
function parse(value: string): { accountId: bigint; secret: string } | undefined {
  const m = VALUE.exec(value);
  if (!m || BigInt(m[1]) > INT8_MAX) return undefined;
  return { accountId: BigInt(m[1]), secret: m[2] };
}

/**
 * Sign-in sessions stored server-side (oauth_sessions): the cookie's value names the
 * account and carries a random value; the row holds its keyed hash. Signing out ends
 * the row, so a copy of the cookie kept from before is refused everywhere.
 */
export class SignInSessions {
  constructor(
    private readonly repo: SignInSessionRepository,
    private readonly hashKey: Buffer,
  ) {}

  private hash(secret: string): string {
    return hmacHex(this.hashKey, `oauth-session\0${secret}`);
  }

  /** A new session of an active user: the cookie's value; null when the user is not an active user of the account. */
  async start(user: { accountId: bigint; userId: bigint }): Promise<string | null> {
    const secret = randomUrlSafe(32);
    const id = await this.repo.start({ accountId: user.accountId }, { userId: user.userId, tokenHash: this.hash(secret), seconds: SESSION_SECONDS });
    return id === null ? null : `${user.accountId}.${secret}`;
  }

  /** The live session a cookie value names: its account and user; undefined when malformed, unknown, or over. */
  async find(value: string): Promise<{ accountId: bigint; userId: bigint } | undefined> {
    const parsed = parse(value);
    if (!parsed) return undefined;
    const found = await this.repo.findLive({ accountId: parsed.accountId }, this.hash(parsed.secret));
    return found ? { accountId: parsed.accountId, userId: found.userId } : undefined;
  }

  /** Ends the session a cookie value names (signing out); nothing when it is malformed or already over. */
  async end(value: string): Promise<void> {
    const parsed = parse(value);
    if (parsed) await this.repo.end({ accountId: parsed.accountId }, this.hash(parsed.secret));
  }
}
