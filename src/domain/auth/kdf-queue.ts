import { availableParallelism } from 'node:os';
import { ServiceUnavailableError } from '../errors';

// The queue every password KDF of this process waits in (passwords.ts runs the KDF).

// At most cores − 1 KDFs run at once (at least one), the rest wait their turn: a burst
// of Basic logins (or of guesses) otherwise fills libuv's four threads with 32 MiB
// scrypt runs that take the CPU and the caches from every other request, token
// requests included. A login waits longer in a burst; everything else keeps going.
export const MAX_CONCURRENT_KDF = Math.max(1, availableParallelism() - 1);

// At most 10 verifications wait per KDF that can run: at ~100 ms per KDF, a login
// admitted to a full queue starts within ~1 s (10 × 100 ms; on 2 cores one KDF
// runs at a time) and is answered within ~1.1 s; with more cores, more run at
// once and the queue is longer in proportion, so the wait stays the same. Before
// this bound the queue had none: 100 concurrent guesses made a real user's login
// wait 12.75 s. A verification that finds the queue full is refused at once
// (ServiceUnavailableError: 503 with Retry-After; login-attempt.ts takes back the
// attempt it counted: nothing was verified).
export const MAX_WAITING_KDF = 10 * MAX_CONCURRENT_KDF;
/** what a refused verification's Retry-After says: about the time the queue takes to drain */
export const KDF_BUSY_RETRY_AFTER_SECONDS = 1;

// Fairness between clients (the authenticator names a verification's client by its
// address), in the manner of FQ-CoDel's new and old flows: a client with one
// verification waiting is "sparse", and sparse clients are served first, in arrival
// order; a client with more than one waiting (a burst) is "busy", and busy clients
// take turns, round-robin, one verification each. When the queue is full, a client
// with fewer waiting than another takes the place of that other client's newest
// waiting one (which is refused, as if it had come later). So a burst from a few
// addresses, however large, holds only its share of the queue, and a login from
// anywhere else gets a place and is served next but for other sparse clients: it
// waits for the KDFs running and its own, not for the burst.
// Verifications of no client (password hashing: the CLI, the first admin) are
// never refused nor displaced.
const INTERNAL = '\0internal';

interface Waiter {
  client: string;
  grant: () => void;
  refuse: (err: Error) => void;
}

let running = 0;
let waitingCount = 0;
/** waiting verifications of sparse clients (served first), and of busy ones (round-robin); each Map's order is its turn order */
const fresh = new Map<string, Waiter[]>();
const old = new Map<string, Waiter[]>();

/** The next waiter: the first sparse client's, else the first busy client's oldest (that client goes to the back). */
function nextWaiter(): Waiter | undefined {
  const from = fresh.size > 0 ? fresh : old;
  const first = from.entries().next();
  if (first.done) return undefined;
  const [client, queue] = first.value;
  const waiter = queue.shift()!;
  from.delete(client);
  if (queue.length > 0) old.set(client, queue);
  waitingCount--;
  return waiter;
}

function queueOf(client: string): Waiter[] | undefined {
  return fresh.get(client) ?? old.get(client);
}

function removeWaiter(waiter: Waiter): boolean {
  const queue = queueOf(waiter.client);
  const i = queue ? queue.indexOf(waiter) : -1;
  if (!queue || i < 0) return false;
  queue.splice(i, 1);
  if (queue.length === 0) {
    fresh.delete(waiter.client);
    old.delete(waiter.client);
  }
  waitingCount--;
  return true;
}

/** Frees a running slot: handed over to the next waiter, if any. */
function handOver(): void {
  const next = nextWaiter();
  if (next) next.grant();
  else running--;
}

function busy(): ServiceUnavailableError {
  return new ServiceUnavailableError(KDF_BUSY_RETRY_AFTER_SECONDS);
}

/**
 * Longest queue drop: when the queue is full, the client with the most waiting gives
 * up its newest one to `key`, if that leaves the two closer to an even share.
 */
function victimFor(key: string): Waiter | undefined {
  const own = queueOf(key)?.length ?? 0;
  let victim: Waiter[] | undefined;
  for (const [other, queue] of [...fresh, ...old]) {
    if (other !== INTERNAL && queue.length > own + 1 && queue.length > (victim?.length ?? 0)) victim = queue;
  }
  return victim?.[victim.length - 1];
}

/**
 * Whether a claim for `client` would be refused right now (without claiming): lets a
 * caller answer 503 before doing any work. A claim may still be refused later.
 */
export function kdfQueueFullFor(client: string | undefined): boolean {
  if (client === undefined || running < MAX_CONCURRENT_KDF || waitingCount < MAX_WAITING_KDF) return false;
  return victimFor(client) === undefined;
}

/** A place to run one KDF, claimed before any work of the verification is done. */
export interface KdfTurn {
  /**
   * Resolves when the KDF may run; rejects with ServiceUnavailableError when the
   * place is given to a fairer claim while waiting.
   */
  readonly ready: Promise<void>;
  /** Gives the place (or the running slot) back; idempotent. */
  release(): void;
}

/**
 * Claims a place to run a KDF for `client` (a client address), synchronously.
 * Throws ServiceUnavailableError when the waiting queue is full and this client
 * already has as many places as any other. Pass the turn to verifyPassword, or
 * release it.
 */
export function claimKdfTurn(client: string | undefined): KdfTurn {
  const key = client ?? INTERNAL;
  if (running < MAX_CONCURRENT_KDF) {
    running++;
    let released = false;
    return {
      ready: Promise.resolve(),
      release() {
        if (released) return;
        released = true;
        handOver();
      },
    };
  }
  if (key !== INTERNAL && waitingCount >= MAX_WAITING_KDF) {
    const displaced = victimFor(key);
    if (!displaced) throw busy();
    removeWaiter(displaced);
    displaced.refuse(busy());
  }
  let state: 'waiting' | 'running' | 'done' = 'waiting';
  let waiter!: Waiter;
  const ready = new Promise<void>((resolve, reject) => {
    waiter = {
      client: key,
      grant: () => {
        if (state !== 'waiting') return handOver();
        state = 'running';
        resolve();
      },
      refuse: (err) => {
        state = 'done';
        reject(err);
      },
    };
  });
  // The holder may be busy elsewhere (counting the attempt) when it is displaced.
  ready.catch(() => undefined);
  const queue = queueOf(key);
  if (!queue) fresh.set(key, [waiter]);
  else {
    queue.push(waiter);
    // more than one waiting: not a sparse client any more, it takes turns with the others
    if (fresh.delete(key)) old.set(key, queue);
  }
  waitingCount++;
  return {
    ready,
    release() {
      if (state === 'waiting') {
        state = 'done';
        if (removeWaiter(waiter)) waiter.refuse(busy());
      } else if (state === 'running') {
        state = 'done';
        handOver();
      }
    },
  };
}
