import {
  afterAttempt, breakerGate, BREAKER_THRESHOLD, HEALTHY, MAX_ATTEMPTS, RETRY_SCHEDULE_SECONDS, retryDelaySeconds, verdictOf, type BreakerState,
} from '../src/webhooks/delivery-policy';
import type { AttemptResult } from '../src/webhooks/http-attempt';

// The delivery rules of docs/api.md, "Webhooks", as the delivery job applies them.

const response = (status: number): AttemptResult => ({ kind: 'response', status, durationMs: 5, body: '' });

describe('webhook delivery policy', () => {
  it('retries connection errors, timeouts, 409, 429 and 5xx; other answers and refused addresses are final; 2xx is success', () => {
    expect(verdictOf({ kind: 'error', durationMs: 12000, reason: 'no answer within 12 s' })).toBe('retry');
    expect([200, 201, 204].map((s) => verdictOf(response(s)))).toEqual(['success', 'success', 'success']);
    expect([409, 429, 500, 502, 503].map((s) => verdictOf(response(s)))).toEqual(['retry', 'retry', 'retry', 'retry', 'retry']);
    expect([301, 302, 400, 401, 403, 404, 410, 422].map((s) => verdictOf(response(s)))).toEqual(Array(8).fill('final'));
    expect(verdictOf({ kind: 'refused', durationMs: 0, reason: '10.0.0.1: a private address' })).toBe('final');
  });

  it('spreads retries over more than 24 hours: about 2 s, 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h …', () => {
    expect(RETRY_SCHEDULE_SECONDS.slice(0, 8)).toEqual([2, 10, 60, 300, 1800, 7200, 21600, 43200]);
    const total = RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(24 * 3600);
    expect(MAX_ATTEMPTS).toBe(RETRY_SCHEDULE_SECONDS.length + 1);
  });

  it('jitters each wait by ±20 %, and honours Retry-After (capped at 12 h)', () => {
    expect(retryDelaySeconds(1, undefined, () => 0)).toBeCloseTo(1.6);
    expect(retryDelaySeconds(1, undefined, () => 1)).toBeCloseTo(2.4);
    expect(retryDelaySeconds(3, undefined, () => 0.5)).toBeCloseTo(60);
    expect(retryDelaySeconds(99, undefined, () => 0.5)).toBeCloseTo(43200);
    expect(retryDelaySeconds(1, 30)).toBe(30);
    expect(retryDelaySeconds(1, 0)).toBe(1);
    expect(retryDelaySeconds(1, 7 * 86400)).toBe(12 * 3600);
  });

  describe('circuit breaker', () => {
    const t0 = new Date('2026-11-25T00:00:00Z');
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    const fail = (state: BreakerState, times: number, now: Date) => {
      for (let i = 0; i < times; i++) state = afterAttempt(state, false, now).state;
      return state;
    };

    it(`stays closed below ${BREAKER_THRESHOLD} failures in a row, and a success resets it`, () => {
      const state = fail(HEALTHY, BREAKER_THRESHOLD - 1, t0);
      expect(breakerGate(state, t0)).toBe('closed');
      expect(afterAttempt(state, true, t0).state).toEqual(HEALTHY);
    });

    it('opens at the threshold (a pause of 1 min), lets one probe through when it ends, and doubles the pause when the probe fails', () => {
      let state = fail(HEALTHY, BREAKER_THRESHOLD, t0);
      expect(breakerGate(state, at(30))).toEqual({ waitUntil: at(60) });
      expect(breakerGate(state, at(60))).toBe('probe');
      state = afterAttempt(state, false, at(60)).state;
      expect(breakerGate(state, at(61))).toEqual({ waitUntil: at(180) });
      expect(afterAttempt(state, true, at(180)).state).toEqual(HEALTHY);
    });

    it('deactivates a webhook whose deliveries have failed for a whole day, saying why', () => {
      const state = fail(HEALTHY, 50, t0);
      expect(afterAttempt(state, false, at(24 * 3600 - 1)).deactivate).toBeUndefined();
      expect(afterAttempt(state, false, at(24 * 3600)).deactivate).toMatch(/^every delivery failed for 24 hours \(51 attempts in a row since 2026-11-25T00:00:00.000Z\)$/);
    });
  });
});
