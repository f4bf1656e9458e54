import { randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { timingSafeEqual } from 'node:crypto';

const scryptRaw = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: ScryptOptions) => Promise<Buffer>;

// At most cores − 1 KDFs run at once (at least one), the rest wait their turn: a burst
// of Basic logins (or of guesses) otherwise fills libuv's four threads with 32 MiB
// scrypt runs that take the CPU and the caches from every other request, token
// requests included. A login waits longer in a burst; everything else keeps going.
const MAX_CONCURRENT_KDF = Math.max(1, availableParallelism() - 1);
let running = 0;
const waiting: (() => void)[] = [];

async function scrypt(pw: string, salt: Buffer, len: number, opts: ScryptOptions): Promise<Buffer> {
  if (running < MAX_CONCURRENT_KDF) running++;
  else await new Promise<void>((resolve) => waiting.push(resolve)); // the slot is handed over by its holder
  try {
    return await scryptRaw(pw, salt, len, opts);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

// scrypt at N = 2^15, r = 8, p = 1 (OWASP): 32 MiB per hash, so maxmem is raised.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LEN = 32;
const MAXMEM = 128 * N * R * 2;

/** Format: scrypt$N$r$p$salt(base64)$hash(base64) */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LEN, { N, r: R, p: P, maxmem: MAXMEM });
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  const actual = await scrypt(password, salt, expected.length, { N: n, r, p, maxmem: 128 * n * r * 2 });
  return timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;
/** A hash to verify against when the email is unknown, so both answers take as long. */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  return dummy;
}
