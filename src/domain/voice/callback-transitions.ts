import { ConflictError } from '../errors';
import type { EventName } from '../events/event-types';

// The callback lifecycle (docs/api.md, "The callback lifecycle"), as one table: an
// action moves a request from one of its `from` statuses to `to`, and emits `event`.
// Every transition of the service is looked up here; an illegal one is answered from
// here (409), never by an `if` in a route or a resolver.
//
//   queued → offered → accepted → dialing → completed
//   offered → queued   (missed, declined, rescinded: the next agent)
//   dialing → queued   (no answer, busy: retried after the delay)
//   dialing → failed   (attempts used up, or the call failed)
//   queued | offered | accepted | dialing → cancelled

export type CallbackStatus = 'queued' | 'offered' | 'accepted' | 'dialing' | 'completed' | 'failed' | 'cancelled';

export type CallbackAction =
  | 'offer' | 'miss' | 'decline' | 'rescind' | 'accept' | 'dial' | 'answer' | 'requeue' | 'fail' | 'cancel';

interface Transition {
  from: readonly CallbackStatus[];
  to: CallbackStatus;
  event: EventName;
  /** the history row's reason, and the audit record's words */
  reason: string | null;
  describe: (agentId: bigint | null) => string;
}

const agent = (id: bigint | null) => (id === null ? 'no agent' : `agent ${id}`);

export const TRANSITIONS: Readonly<Record<CallbackAction, Transition>> = {
  offer: { from: ['queued'], to: 'offered', event: 'callback_request.offered', reason: null, describe: (a) => `Offered to ${agent(a)}` },
  miss: { from: ['offered'], to: 'queued', event: 'callback_request.requeued', reason: 'missed', describe: (a) => `Offer to ${agent(a)} expired: back in the queue` },
  decline: { from: ['offered'], to: 'queued', event: 'callback_request.requeued', reason: 'declined', describe: (a) => `Declined by ${agent(a)}: back in the queue` },
  rescind: {
    from: ['offered'], to: 'queued', event: 'callback_request.requeued', reason: 'rescinded',
    describe: (a) => `Offer to ${agent(a)} withdrawn (the agent is no longer online): back in the queue`,
  },
  accept: { from: ['offered'], to: 'accepted', event: 'callback_request.accepted', reason: null, describe: (a) => `Accepted by ${agent(a)}` },
  dial: { from: ['accepted'], to: 'dialing', event: 'callback_request.dialing', reason: null, describe: (a) => `Dialing the requester for ${agent(a)}` },
  answer: { from: ['dialing'], to: 'completed', event: 'callback_request.completed', reason: 'answered', describe: (a) => `Completed: answered (${agent(a)})` },
  requeue: { from: ['dialing'], to: 'queued', event: 'callback_request.requeued', reason: null, describe: () => 'Not reached: back in the queue for a retry' },
  fail: { from: ['dialing'], to: 'failed', event: 'callback_request.failed', reason: null, describe: () => 'Failed' },
  cancel: {
    from: ['queued', 'offered', 'accepted', 'dialing'], to: 'cancelled', event: 'callback_request.cancelled', reason: null, describe: () => 'Cancelled',
  },
};

/** The transition of `action` from `status`, or the 409 that says why it cannot happen. */
export function transition(status: CallbackStatus, action: CallbackAction): Transition {
  const t = TRANSITIONS[action];
  if (!t.from.includes(status)) {
    throw new ConflictError(`The callback request is ${status}: it cannot be ${PAST[action]} (only when ${t.from.join(' or ')})`);
  }
  return t;
}

const PAST: Record<CallbackAction, string> = {
  offer: 'offered', miss: 'missed', decline: 'declined', rescind: 'rescinded', accept: 'accepted', dial: 'dialed',
  answer: 'completed', requeue: 'requeued', fail: 'failed', cancel: 'cancelled',
};

/** What the telephony integration reports of a dial (POST …/outcome). */
export const CALL_OUTCOMES = ['answered', 'no_answer', 'busy', 'failed'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/**
 * Where an outcome takes a dialing request: answered → completed; no_answer and busy →
 * queued for a retry while attempts remain, else failed; failed (the call could not be
 * placed at all, e.g. a number that does not exist) → failed at once.
 */
export function outcomeAction(outcome: CallOutcome, attempts: number, maxAttempts: number): CallbackAction {
  if (outcome === 'answered') return 'answer';
  if (outcome === 'failed') return 'fail';
  return attempts >= maxAttempts ? 'fail' : 'requeue';
}
