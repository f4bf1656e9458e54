import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { promisify } from 'node:util';
import { claimKdfTurn, type KdfTurn } from './kdf-queue';

// Password hashing and verification with scrypt; each KDF waits its turn in the
// process's KDF queue (kdf-queue.ts).

const scryptRaw = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: ScryptOptions) => Promise<Buffer>;

let kdfCount = 0;

/** KDFs run by this process so far (tests count them per login attempt). */
export function kdfRuns(): number {
  return kdfCount;
}

/** Runs one scrypt in the given turn (claimed here, never refused, when none is given), and releases it. */
async function scrypt(pw: string, salt: Buffer, len: number, opts: ScryptOptions, turn?: KdfTurn): Promise<Buffer> {
  const mine = turn ?? claimKdfTurn(undefined);
  try {
    await mine.ready;
    kdfCount++;
    return await scryptRaw(pw, salt, len, opts);
  } finally {
    mine.release();
  }
}

// scrypt at N = 2^15, r = 8, p = 1 (OWASP): 32 MiB per hash, so maxmem is raised.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LEN = 32;
const MAXMEM = 128 * N * R * 2;

/**
 * Format: scrypt$N$r$p$salt(base64)$hash(base64). One KDF, in `turn` when given (a
 * request's: the caller's place in the queue, refused when full), otherwise in a
 * place that is never refused (the CLI, the first admin).
 */
export async function hashPassword(password: string, turn?: KdfTurn): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LEN, { N, r: R, p: P, maxmem: MAXMEM }, turn);
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
}

/**
 * Whether password matches the stored hash: one KDF, in `turn` when given (which
 * is released in any case), otherwise in a place of its own.
 */
export async function verifyPassword(password: string, stored: string, turn?: KdfTurn): Promise<boolean> {
  const parts = stored.split('$');
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const sane = [n, r, p].every(Number.isSafeInteger) && n >= 2 && n <= 2 ** 20 && (n & (n - 1)) === 0 && r >= 1 && r <= 32 && p >= 1 && p <= 16;
  if (parts.length !== 6 || parts[0] !== 'scrypt' || !sane || Buffer.from(parts[5], 'base64').length < 16) {
    // Not a hash of ours (a user without a password stores an unusable marker):
    // nothing matches, in the time a wrong password takes (one KDF), never an error.
    await verifyPassword(password, dummyPasswordHash(), turn);
    return false;
  }
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  const actual = await scrypt(password, salt, expected.length, { N: n, r, p, maxmem: 128 * n * r * 2 }, turn);
  return timingSafeEqual(actual, expected);
}

/**
 * A password made for someone (the first admin's, the operator's reset): 16 characters
 * of base64url, 96 random bits, to be shown once and then changed.
 */
export function generatePassword(): string {
  return randomBytes(12).toString('base64url');
}

let dummy: string | undefined;
/**
 * A hash to verify against when no user can match, so that the answer takes as
 * long as a wrong password. Random bytes in the format of a real hash, at the
 * current parameters: verifying against it costs exactly one KDF, and making it
 * costs none (so that the first unknown email of a process is no slower either).
 */
export function dummyPasswordHash(): string {
  dummy ??= ['scrypt', N, R, P, randomBytes(16).toString('base64'), randomBytes(KEY_LEN).toString('base64')].join('$');
  return dummy;
}
