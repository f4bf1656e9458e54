import { claimKdfTurn, MAX_CONCURRENT_KDF, MAX_WAITING_KDF, type KdfTurn } from '../src/domain/auth/kdf-queue';
import { hashPassword } from '../src/domain/auth/passwords';
import { ServiceUnavailableError } from '../src/domain/errors';

// The password KDF's queue (passwords.ts): at most MAX_CONCURRENT_KDF run, at most
// MAX_WAITING_KDF wait, served by client (address): a client with one claim waiting
// is served first; clients with more (a burst) take turns, round-robin. A full queue refuses a client that already holds as many places as
// any other, and otherwise gives it the place of the newest waiting claim of the
// client holding the most.
// (The end-to-end view, 503 with Retry-After, is in brute-force.address.test.ts, and
// under a real burst in faults/login-burst.test.ts.)

const tick = () => new Promise((r) => setImmediate(r));

describe('KDF queue', () => {
  const held: KdfTurn[] = [];
  afterEach(() => {
    for (const turn of held.splice(0)) turn.release();
  });
  const claim = (client: string | undefined) => {
    const turn = claimKdfTurn(client);
    held.push(turn);
    return turn;
  };

  it('runs MAX_CONCURRENT_KDF at once, queues MAX_WAITING_KDF, and refuses the next claim of the same client at once', async () => {
    const running = Array.from({ length: MAX_CONCURRENT_KDF }, () => claim('a'));
    const states = await Promise.all(running.map((t) => Promise.race([t.ready.then(() => 'ready'), tick().then(() => 'waiting')])));
    expect(states).toEqual(running.map(() => 'ready'));
    const queued = Array.from({ length: MAX_WAITING_KDF }, () => claim('a'));
    expect(() => claim('a')).toThrow(ServiceUnavailableError);
    try {
      claimKdfTurn('a');
    } catch (err) {
      expect((err as ServiceUnavailableError).retryAfter).toBe(1);
    }
    // the next one in line starts when a running one is released
    let started = false;
    void queued[0].ready.then(() => (started = true));
    await tick();
    expect(started).toBe(false);
    running[0].release();
    await tick();
    expect(started).toBe(true);
  });

  it('gives a full queue’s place to a client with fewer, displacing the newest claim of the client with the most, until their shares are even', async () => {
    for (let i = 0; i < MAX_CONCURRENT_KDF; i++) claim('busy');
    const a = Array.from({ length: MAX_WAITING_KDF }, () => claim('a'));
    const outcomes = a.map((t) => t.ready.then(() => 'granted', (err) => (err instanceof ServiceUnavailableError ? 'displaced' : 'other')));
    const b: KdfTurn[] = [];
    for (;;) {
      try {
        b.push(claim('b'));
      } catch (err) {
        expect(err).toBeInstanceOf(ServiceUnavailableError);
        break;
      }
    }
    // b got places until a held at most one more than b
    expect(b.length).toBe(Math.floor(MAX_WAITING_KDF / 2));
    const settled = await Promise.all(outcomes.map((o) => Promise.race([o, tick().then(() => 'waiting')])));
    // a's newest ones gave way, its oldest kept their places
    expect(settled).toEqual([...Array(MAX_WAITING_KDF - b.length).fill('waiting'), ...Array(b.length).fill('displaced')]);
    // a third client still gets a place, from the client holding the most
    const c = claim('c');
    expect(await Promise.race([a[MAX_WAITING_KDF - b.length - 1].ready.then(() => 'granted', () => 'displaced'), tick().then(() => 'waiting')])).toBe('displaced');
    expect(await Promise.race([c.ready.then(() => 'granted', () => 'displaced'), tick().then(() => 'waiting')])).toBe('waiting');
  });

  it('serves a client with one claim waiting first, then the others round-robin, one per client in turn', async () => {
    const running = Array.from({ length: MAX_CONCURRENT_KDF }, () => claim('busy'));
    const order: string[] = [];
    const named = new Map<string, KdfTurn>();
    for (const name of ['a1', 'a2', 'a3', 'b1', 'c1', 'b2']) {
      const turn = claim(name[0]);
      named.set(name, turn);
      void turn.ready.then(() => order.push(name));
    }
    for (const turn of running) turn.release();
    // each granted claim finishes (releases) in turn, handing its slot on
    for (let i = 0; i < 10 && order.length < named.size; i++) {
      await tick();
      for (const name of order) named.get(name)!.release();
    }
    expect(order).toEqual(['c1', 'a1', 'b1', 'a2', 'b2', 'a3']);
  });

  it('serves a login arriving during a burst before the burst’s remaining claims', async () => {
    // one slot circulates: the others stay busy
    const busy = Array.from({ length: MAX_CONCURRENT_KDF }, () => claim('busy'));
    const order: string[] = [];
    const named = new Map<string, KdfTurn>();
    const waitFor = (name: string) => {
      const turn = claim(name[0]);
      named.set(name, turn);
      void turn.ready.then(() => order.push(name));
    };
    for (const name of ['a1', 'a2', 'a3', 'b1', 'b2', 'b3']) waitFor(name);
    busy[0].release();
    await tick();
    named.get('a1')!.release();
    await tick();
    // a and b have each been served once: they take turns now
    expect(order).toEqual(['a1', 'b1']);
    // a login from elsewhere goes next, ahead of the burst's remaining claims
    waitFor('c1');
    for (const name of ['b1', 'c1', 'a2', 'b2', 'a3']) {
      named.get(name)!.release();
      await tick();
    }
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'b3']);
  });

  it('never refuses a password hash (no client), whatever the queue', async () => {
    for (let i = 0; i < MAX_CONCURRENT_KDF; i++) claim('busy');
    for (let i = 0; i < MAX_WAITING_KDF; i++) claim('a');
    const hashing = hashPassword('a long enough password');
    // it waits its turn, then runs
    held.splice(0).forEach((t) => t.release());
    await expect(hashing).resolves.toMatch(/^scrypt\$/);
  });
});
