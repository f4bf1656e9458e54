import { authorize, type Permission } from '../authorization';
import type { EventEnvelope } from './event-log.repository';
import type { Viewer } from '../auth/viewer';
import { CLOSE } from './subscription-limits';

/** What a subscription asks of its connection's session (subscriber-session.ts). */
export interface SubscriptionOwner {
  readonly viewer: Viewer;
  stillValid(): Promise<boolean>;
  close(close: { code: number; reason: string }): void;
}

/**
 * One subscription's events, as an async iterator (what a GraphQL subscription
 * resolver returns): the events of its session's account whose type it asked
 * for, in a bounded buffer. A reader that falls `buffer` events behind closes
 * its connection (1013): memory never grows with a reader that stopped reading.
 * Before each event is handed over, the session's credentials are checked when
 * due, and the policy is asked again, for the permission the subscription was
 * made with (an admin made an agent stops here with FORBIDDEN).
 */
export class EventSubscription implements AsyncIterableIterator<EventEnvelope> {
  private queue: EventEnvelope[] = [];
  private wake?: () => void;
  private done = false;

  constructor(
    private readonly session: SubscriptionOwner,
    private readonly types: ReadonlySet<string> | null,
    private readonly buffer: number,
    private readonly onEnd: () => void,
    private readonly permission: Permission = 'events.read',
  ) {}

  offer(event: EventEnvelope): void {
    if (this.done || (this.types && !this.types.has(event.type))) return;
    if (this.queue.length >= this.buffer) {
      this.session.close(CLOSE.slowConsumer);
      return;
    }
    this.queue.push(event);
    this.wakeUp();
  }

  async next(): Promise<IteratorResult<EventEnvelope>> {
    for (;;) {
      if (this.done) return { done: true, value: undefined };
      const event = this.queue.shift();
      if (event === undefined) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      if (!(await this.session.stillValid())) {
        this.end();
        continue;
      }
      try {
        authorize(this.session.viewer, this.permission);
      } catch (err) {
        this.end();
        throw err;
      }
      return { done: false, value: event };
    }
  }

  async return(): Promise<IteratorResult<EventEnvelope>> {
    this.end();
    return { done: true, value: undefined };
  }

  async throw(err?: unknown): Promise<IteratorResult<EventEnvelope>> {
    this.end();
    throw err;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** No more events: the buffer is dropped, and a waiting reader is told so. */
  end(): void {
    if (this.done) return;
    this.done = true;
    this.queue = [];
    this.onEnd();
    this.wakeUp();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
