import type { Permission } from '../authorization';
import type { Viewer } from '../auth/viewer';
import type { EventEnvelope } from './event-log.repository';
import { EVENT_TYPE_PREFIX } from './event-types';
import { EventSubscription } from './event-subscription';
import { CLOSE, SUBSCRIPTION_LIMITS, type SubscriptionLimits } from './subscription-limits';

// Events after which the account's sessions check their credentials again before the next delivery.
const CREDENTIAL_CHANGES = ['oauth_token.', 'oauth_client.', 'user.'].map((p) => `${EVENT_TYPE_PREFIX}${p}`);

export interface SessionOptions {
  viewer: Viewer;
  /** authenticates the connection's credentials again: the viewer, or null when they no longer do */
  recheck: () => Promise<Viewer | null>;
  /** closes the connection (code, reason) */
  close: (code: number, reason: string) => void;
  /** limits; SUBSCRIPTION_LIMITS by default */
  limits?: Partial<SubscriptionLimits>;
  now?: () => number;
}

/**
 * One authenticated WebSocket connection: its viewer, its subscriptions, and
 * the checks made before each delivery. Its credentials are checked again at
 * the latest every `recheckSeconds`, and at once (before the next event is
 * delivered) after an event of its account about tokens, clients or users,
 * which is how a revocation anywhere, in any process, reaches it: such events
 * come through the same ordered feed as the ones it would otherwise see next.
 */
export class SubscriberSession {
  viewer: Viewer;
  readonly limits: SubscriptionLimits;
  private readonly subscriptions = new Set<EventSubscription>();
  private checkedAt: number;
  private stale = false;
  private checking?: Promise<boolean>;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly options: SessionOptions) {
    this.viewer = options.viewer;
    this.limits = { ...SUBSCRIPTION_LIMITS, ...options.limits };
    this.now = options.now ?? Date.now;
    this.checkedAt = this.now();
  }

  get accountId(): bigint {
    return this.viewer.accountId;
  }

  /** Subscriptions open now. */
  get subscriptionCount(): number {
    return this.subscriptions.size;
  }

  /** A subscription to the events whose type is in `types` (all when null). */
  /** The events of these types (all: null), each handed over only while the viewer has `permission`. */
  subscribe(types: ReadonlySet<string> | null, permission: Permission = 'events.read'): EventSubscription {
    const subscription = new EventSubscription(this, types, this.limits.buffer, () => this.subscriptions.delete(subscription), permission);
    if (this.closed) subscription.end();
    else this.subscriptions.add(subscription);
    return subscription;
  }

  /** From the feed: an event of this session's account. */
  deliver(event: EventEnvelope): void {
    if (CREDENTIAL_CHANGES.some((prefix) => event.type.startsWith(prefix))) this.stale = true;
    for (const subscription of this.subscriptions) subscription.offer(event);
  }

  /** Whether the credentials still authenticate, checked again when due; closes the session (4401) when not. */
  async stillValid(): Promise<boolean> {
    if (this.closed) return false;
    const expiresAt = this.viewer.token?.record.expiresAt;
    const due = this.stale || this.now() - this.checkedAt >= this.limits.recheckSeconds * 1000 || (expiresAt != null && expiresAt.getTime() <= this.now());
    if (!due) return true;
    this.checking ??= this.recheck().finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** Ends every subscription and closes the connection. */
  close(close: { code: number; reason: string }): void {
    if (this.closed) return;
    this.closed = true;
    for (const subscription of [...this.subscriptions]) subscription.end();
    this.subscriptions.clear();
    this.options.close(close.code, close.reason);
  }

  /** The connection is gone (closed by either side). */
  ended(): void {
    this.closed = true;
    for (const subscription of [...this.subscriptions]) subscription.end();
    this.subscriptions.clear();
  }

  private async recheck(): Promise<boolean> {
    this.stale = false;
    const startedAt = this.now();
    let viewer: Viewer | null;
    try {
      viewer = await this.options.recheck();
    } catch {
      viewer = null; // revoked, expired, locked out: the credentials no longer authenticate
    }
    if (!viewer) {
      this.close(CLOSE.unauthorized);
      return false;
    }
    this.viewer = viewer;
    this.checkedAt = startedAt;
    return !this.closed;
  }
}
