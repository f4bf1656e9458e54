import { EVENTS_CHANNEL, type EventEnvelope } from './event-log.repository';
import type { SubscriberSession } from './subscriber-session';

/** Db.listen (src/db/create-db.ts): LISTEN on a channel, resolving to a function that stops it. */
type Listen = (channel: string, onNotify: (payload?: string) => void) => Promise<() => Promise<void>>;

export interface EventFeedOptions {
  listen: Listen;
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
 */
export class EventFeed {
  private readonly byAccount = new Map<string, Set<SubscriberSession>>();
  private listening?: Promise<() => Promise<void>>;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(private readonly options: EventFeedOptions) {}

  /** Adds a session; resolves once the feed listens, so that every event committed afterwards reaches it. */
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
  }

  leave(session: SubscriberSession): void {
    const key = String(session.accountId);
    const sessions = this.byAccount.get(key);
    if (!sessions) return;
    sessions.delete(session);
    if (sessions.size === 0) this.byAccount.delete(key);
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
