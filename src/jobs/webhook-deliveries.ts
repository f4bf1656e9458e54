import type { Services } from '../domain/services';
import { EVENT_PUBLISHED_JOB } from '../domain/events/event-log.repository';
import { DELIVERY_TIMEOUT_MS, deliveryRequest, WEBHOOK_DELIVER_JOB } from '../domain/webhooks/webhook-delivery.service';
import type { ClaimedJob } from '../domain/jobs/job.repository';
import { MAX_ATTEMPTS, retryDelaySeconds, verdictOf } from '../webhooks/delivery-policy';
import { attempt } from '../webhooks/http-attempt';
import { FinalJobError, RetryJobLater, type JobEngine } from './engine';

// The two jobs of webhook deliveries (docs/api.md, "Webhook deliveries"):
// event.published fans an event out to the subscribed webhooks (one invocation and one
// webhook.deliver job each, in one transaction), and webhook.deliver sends one
// invocation: signed, guarded, within 12 s, retried on the policy's schedule.

/** What became of one attempt: delivered, failed and tried again later, or failed and given up. */
export type WebhookAttemptOutcome = 'success' | 'retrying' | 'failed';

export interface WebhookDeliveryOptions {
  /** seconds before the next attempt after `failed` failed attempts (default: the policy's schedule); tests shorten it */
  retryDelay?: (failed: number, retryAfter?: number) => number;
  timeoutMs?: number;
  /** told of every attempt once it is recorded (the app's /metrics counts them) */
  onAttempt?: (outcome: WebhookAttemptOutcome) => void;
}

function ids(job: ClaimedJob, field: string): { accountId: bigint; id: string } {
  const id = job.payload[field];
  if (job.accountId === null || typeof id !== 'string') throw new FinalJobError(`${job.kind}: no account or ${field}`);
  return { accountId: job.accountId, id };
}

export function registerWebhookDeliveries(engine: JobEngine, services: Services, options: WebhookDeliveryOptions = {}): void {
  const deliveries = services.webhookDeliveries;
  const retryDelay = options.retryDelay ?? ((failed: number, retryAfter?: number) => retryDelaySeconds(failed, retryAfter));
  engine.handle(EVENT_PUBLISHED_JOB, {
    run: async (job) => {
      const { accountId, id } = ids(job, 'event_id');
      await deliveries.fanOut(accountId, id);
    },
  });
  engine.handle(WEBHOOK_DELIVER_JOB, {
    run: async (job, signal) => {
      const { accountId, id } = ids(job, 'invocation_id');
      const delivery = await deliveries.delivery(accountId, BigInt(id));
      if (delivery === null) return;
      if ('end' in delivery) return deliveries.end(accountId, BigInt(id), delivery.end);
      const wait = await deliveries.gate(accountId, delivery.target.webhook);
      if (wait) throw new RetryJobLater('the webhook is paused (circuit breaker)', Math.max(0.05, (wait.getTime() - Date.now()) / 1000));
      const startedAt = new Date();
      const { target, envelope, secret } = delivery;
      const request = deliveryRequest(target.webhook, envelope, secret, String(target.invocation.id), startedAt);
      const result = await attempt({ ...request, timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS, check: deliveries.addressCheck, signal });
      if (signal.aborted) throw new Error('stopped during the request');
      const verdict = verdictOf(result);
      const made = delivery.target.invocation.attempts + 1;
      const retry = verdict === 'retry' && made < MAX_ATTEMPTS;
      const status: WebhookAttemptOutcome = verdict === 'success' ? 'success' : retry ? 'retrying' : 'failed';
      const reason = result.kind === 'response' ? (verdict === 'success' ? null : `HTTP ${result.status}`) : result.reason;
      await deliveries.recordAttempt(
        delivery,
        {
          startedAt, durationMs: result.durationMs, statusCode: result.kind === 'response' ? result.status : null,
          error: result.kind === 'response' ? null : result.reason, response: result.kind === 'response' ? result.body : null,
        },
        { status, reason: status === 'failed' ? reason : null, delivered: verdict === 'success' },
      );
      options.onAttempt?.(status);
      if (retry) throw new RetryJobLater(`delivery failed: ${reason}`, retryDelay(made, result.kind === 'response' ? result.retryAfterSeconds : undefined));
    },
  });
}
