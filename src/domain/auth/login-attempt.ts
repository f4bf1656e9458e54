import { RateLimitedError, ServiceUnavailableError } from '../errors';
import { claimKdfTurn, KDF_BUSY_RETRY_AFTER_SECONDS, kdfQueueFullFor, type KdfTurn } from './kdf-queue';
import type { LoginRepository, LoginWindow } from './login.repository';

export interface LoginAttempt {
  /** the email's window first (a success clears it), then any other (the address's) */
  windows: LoginWindow[];
  /** the KDF queue's client (clientOf of the caller's address); undefined: never refused */
  client: string | undefined;
  /** exactly one KDF, in the given turn: whether the password matched */
  verify: (turn: KdfTurn) => Promise<boolean>;
  /** the 429's description */
  throttled: string;
}

/**
 * The one way a password is guessed, whoever asks (a Basic login, the previous
 * password of a password change): the caller learns the answer in this order:
 * 0. when the KDF queue (kdf-queue.ts) is already full for this client: 503 with
 *    Retry-After at once, before any write (a burst's excess costs one read each);
 * 1. the attempt is counted in each window, as a failure until it succeeds, before
 *    the KDF runs, atomically across processes (rate_window_take), so that
 *    concurrent guesses cannot get past a limit; refused by either window: 429,
 *    and nothing counted;
 * 2. a place in the KDF queue, claimed at once: when the queue has filled
 *    meanwhile, 503, and the attempt is taken back (it was no failure: nothing was
 *    verified). The same when the place is given to a fairer claim while waiting;
 * 3. exactly one KDF; a failure's time is set to when it is known (its window
 *    starts then, as before the KDF was counted); a success clears the email's
 *    window, and of the others only this attempt's hits.
 * Only counted attempts claim places, so a burst on one email past its limit is
 * answered 429 (not 503) as long as its counted attempts fit the queue.
 */
export class LoginAttempts {
  constructor(
    private readonly logins: LoginRepository,
    private readonly windowSeconds: number,
  ) {}

  /** Whether the password matched; throws RateLimitedError (429) or ServiceUnavailableError (503). */
  async attempt(attempt: LoginAttempt): Promise<boolean> {
    if (kdfQueueFullFor(attempt.client)) throw new ServiceUnavailableError(KDF_BUSY_RETRY_AFTER_SECONDS);
    const taken = await this.logins.recordAttempt(attempt.windows, this.windowSeconds);
    if (!('hits' in taken)) throw new RateLimitedError(taken.retryAfter, attempt.throttled);
    let turn: KdfTurn | undefined;
    let matched: boolean;
    try {
      turn = claimKdfTurn(attempt.client);
      matched = await attempt.verify(turn);
    } catch (err) {
      if (err instanceof ServiceUnavailableError) await this.logins.takeBack(taken.hits);
      throw err;
    } finally {
      turn?.release();
    }
    if (matched) await this.logins.clear(attempt.windows[0].key, taken.hits);
    else await this.logins.failedNow(taken.hits, this.windowSeconds);
    return matched;
  }

  /** A success that needed no attempt (a verification this process remembers): it clears the email's window too. */
  async succeededWithoutAttempt(emailWindow: LoginWindow): Promise<void> {
    await this.logins.clear(emailWindow.key, []);
  }
}
