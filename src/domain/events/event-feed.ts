import { EVENTS_CHANNEL, type EventEnvelope } from './event-log.repository';
import { LIVE_LISTENER_SECONDS } from './live-listener.repository';
import type { SubscriberSession } from './subscriber-session';

/** Db.listen (src/db/create-db.ts): LISTEN on a channel, resolving to a function that stops it. */
type Listen = (channel: string, onNotify: (payload?: string) => void) => Promise<() => Promise<void>>;

export interface EventFeedOptions {
  listen: Listen;
  /**
   * LiveListenerRepository's hold and release for this process: the events' NOTIFY is sent
   * only for accounts someone holds (event-log.repository.ts). Absent (tests of the feed
   * alone), nothing is held.
   */
  listeners?: { hold(accountId: bigint): Promise<void>; release(accountId: bigint): Promise<void> };
  /** EventLogRepository.findPublished: one new event by its id, whatever its account */
  read: (id: string) => Promise<EventEnvelope | null>;
  /** a read that failed (the event is skipped for the live subscribers; webhooks still get it) */
  onError: (err: unknown) => void;
}

/**
 * The live fan-out of events to GraphQL subscribers (docs/api.md, "Live events"):
 * one LISTEN per process on channel `events`, whose NOTIFY (sent at commit, by any
 * process on the database) carries a new event's id; one read of the event per
 * notification, whatever the number of subscribers; then the event goes to the
 * sessions of its own account only. Notifications are handled one after another,
 * so that a subscriber sees the events in the order they committed. It listens
 * from the first session on, and not at all in a process nobody subscribes to.
 * Events are notified only for the accounts some process holds a live row of
 * (live_event_listeners): the feed holds one per account it has sessions of,
 * renewed every third of LIVE_LISTENER_SECONDS, released with the account's last session.
 */
export class EventFeed {
  private readonly byAccount = new Map<string, Set<SubscriberSession>>();
  /** accounts whose live row this process holds: renewed by `renewal` */
  private readonly held = new Set<string>();
  /** per account, its holds and releases one after another (a release never overtakes a later hold) */
  private readonly rowOps = new Map<string, Promise<void>>();
  private listening?: Promise<() => Promise<void>>;
  private renewal?: NodeJS.Timeout;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: EventFeedOptions) {}

  /**
   * Adds a session; resolves once the feed listens and the account's live row is held,
   * so that every event whose statement begins afterwards reaches it.
   */
  async join(session: SubscriberSession): Promise<void> {
    if (this.stopped) throw new Error('the event feed is stopped');
    this.listening ??= this.options.listen(EVENTS_CHANNEL, (id) => this.notified(id));
    try {
      await this.listening;
    } catch (err) {
      this.listening = undefined;
      throw err;
    }
    const key = String(session.accountId);
    let sessions = this.byAccount.get(key);
    if (!sessions) this.byAccount.set(key, (sessions = new Set()));
    sessions.add(session);
    const listeners = this.options.listeners;
    if (!listeners) return;
    this.held.add(key);
    this.renewal ??= setInterval(() => this.renew(), (LIVE_LISTENER_SECONDS * 1000) / 3).unref();
    try {
      await this.rowOp(key, () => listeners.hold(session.accountId));
    } catch (err) {
      this.leave(session);
      throw err;
    }
  }

  leave(session: SubscriberSession): void {
    const key = String(session.accountId);
    const sessions = this.byAccount.get(key);
    if (!sessions) return;
    sessions.delete(session);
    if (sessions.size > 0) return;
    this.byAccount.delete(key);
    const listeners = this.options.listeners;
    if (!listeners || !this.held.delete(key)) return;
    // a session of the account joined meanwhile: its hold stands (a failed release leaves the row to expire)
    this.rowOp(key, () => (this.byAccount.has(key) ? Promise.resolve() : listeners.release(session.accountId))).catch(this.options.onError);
  }

  private rowOp(key: string, op: () => Promise<void>): Promise<void> {
    const next = (this.rowOps.get(key) ?? Promise.resolve()).catch(() => {}).then(op);
    this.rowOps.set(key, next);
    const forget = () => {
      if (this.rowOps.get(key) === next) this.rowOps.delete(key);
    };
    next.then(forget, forget);
    return next;
  }

  private renew(): void {
    const listeners = this.options.listeners!;
    for (const key of this.held) this.rowOp(key, () => listeners.hold(BigInt(key))).catch(this.options.onError);
  }

  /** Sessions joined now (tests; operators). */
  get sessionCount(): number {
    let n = 0;
    for (const sessions of this.byAccount.values()) n += sessions.size;
    return n;
  }

  /** Subscriptions open now, over all sessions (tests; operators). */
  get subscriptionCount(): number {
    let n = 0;
    for (const sessions of this.byAccount.values()) for (const session of sessions) n += session.subscriptionCount;
    return n;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.renewal) clearInterval(this.renewal);
    const held = [...this.held];
    this.held.clear();
    const listeners = this.options.listeners;
    if (listeners) await Promise.all(held.map((key) => this.rowOp(key, () => listeners.release(BigInt(key))).catch(() => {})));
    const listening = this.listening;
    this.listening = undefined;
    if (listening) await (await listening.catch(() => async () => {}))();
    await this.chain;
  }

  /** `id` is absent after a lost LISTEN connection came back: what was sent meanwhile is not replayed (webhooks have it). */
  private notified(id: string | undefined): void {
    if (id === undefined || this.byAccount.size === 0) return;
    this.chain = this.chain.then(() => this.dispatch(id)).catch(this.options.onError);
  }

  private async dispatch(id: string): Promise<void> {
    const event = await this.options.read(id);
    if (!event) return;
    const sessions = this.byAccount.get(String(event.account_id));
    if (!sessions) return;
    for (const session of sessions) session.deliver(event);
  }
}
