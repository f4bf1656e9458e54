import type { AttemptResult } from './http-attempt';

// When a webhook delivery is retried, and when a webhook is paused or switched off
// (docs/api.md, "Webhooks"). Pure functions of the attempt and of the webhook's state, so
// that the delivery job, the tests and the documentation agree.

/** Waits before retries 1, 2, 3 …: about 2 s, 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 12 h (≈ 33 h in all). */
export const RETRY_SCHEDULE_SECONDS = [2, 10, 60, 300, 1800, 7200, 21600, 43200, 43200] as const;

/** Attempts of one delivery: the first and one per step of the schedule. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1;

/** A receiver's Retry-After is honoured up to this (longer asks are capped, not ignored). */
const MAX_RETRY_AFTER_SECONDS = 12 * 3600;

export type Verdict = 'success' | 'retry' | 'final';

/**
 * 2xx: delivered. Connection errors, timeouts, 409, 429 and 5xx: retried. Other answers
 * (4xx, and 3xx: redirects are not followed) and an address the guard refuses: final.
 */
export function verdictOf(result: AttemptResult): Verdict {
  if (result.kind === 'refused') return 'final';
  if (result.kind === 'error') return 'retry';
  const { status } = result;
  if (status >= 200 && status < 300) return 'success';
  if (status === 409 || status === 429 || status >= 500) return 'retry';
  return 'final';
}

/**
 * Seconds before the next attempt after `failed` failed attempts (from 1): the schedule's
 * step with ±20 % jitter (so that receivers coming back are not met by every retry at
 * once), or the receiver's Retry-After when it gave one.
 */
export function retryDelaySeconds(failed: number, retryAfter?: number, random = Math.random): number {
  if (retryAfter !== undefined) return Math.min(Math.max(retryAfter, 1), MAX_RETRY_AFTER_SECONDS);
  const base = RETRY_SCHEDULE_SECONDS[Math.min(Math.max(failed, 1), RETRY_SCHEDULE_SECONDS.length) - 1];
  return base * (0.8 + 0.4 * random());
}

// ------------------------------------------------------------------ circuit breaker

/** A webhook's health, as its row keeps it. */
export interface BreakerState {
  /** failed attempts in a row (any delivery of the webhook) */
  consecutiveFailures: number;
  /** when the current run of failures began; null while the webhook succeeds */
  failingSince: Date | null;
  /** paused until then: deliveries wait; past it one probe goes out (half-open) */
  openUntil: Date | null;
}

/** Failures in a row that pause a webhook. */
export const BREAKER_THRESHOLD = 10;
/** The first pause; each failed probe doubles it, up to an hour. */
const FIRST_PAUSE_SECONDS = 60;
const LONGEST_PAUSE_SECONDS = 3600;
/** A webhook that has failed for this long without a success is deactivated. */
const DEACTIVATE_AFTER_SECONDS = 24 * 3600;

export const HEALTHY: BreakerState = { consecutiveFailures: 0, failingSince: null, openUntil: null };

/** Whether a delivery may go now: 'closed' (normally), 'probe' (the pause is over: one goes), or wait until then. */
export function breakerGate(state: BreakerState, now: Date): 'closed' | 'probe' | { waitUntil: Date } {
  if (state.openUntil === null) return 'closed';
  return state.openUntil > now ? { waitUntil: state.openUntil } : 'probe';
}

/** The state after an attempt; `deactivate` says why the webhook is switched off, when it is. */
export function afterAttempt(state: BreakerState, delivered: boolean, now: Date): { state: BreakerState; deactivate?: string } {
  if (delivered) return { state: HEALTHY };
  const failures = state.consecutiveFailures + 1;
  const since = state.failingSince ?? now;
  if (now.getTime() - since.getTime() >= DEACTIVATE_AFTER_SECONDS * 1000) {
    return {
      state: { consecutiveFailures: failures, failingSince: since, openUntil: null },
      deactivate: `every delivery failed for 24 hours (${failures} attempts in a row since ${since.toISOString()})`,
    };
  }
  if (failures < BREAKER_THRESHOLD) return { state: { consecutiveFailures: failures, failingSince: since, openUntil: null } };
  const pauses = failures - BREAKER_THRESHOLD; // 0 for the pause that opens it, then one per failed probe
  const pause = Math.min(FIRST_PAUSE_SECONDS * 2 ** pauses, LONGEST_PAUSE_SECONDS);
  return { state: { consecutiveFailures: failures, failingSince: since, openUntil: new Date(now.getTime() + pause * 1000) } };
}
