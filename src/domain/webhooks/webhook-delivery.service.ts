import { randomUUID } from 'node:crypto';
import { tenantTransaction } from '../../db/tenant-sql';
import { afterAttempt, breakerGate, type BreakerState } from '../../webhooks/delivery-policy';
import { recordAudit, systemActor } from '../audit/audit-log.repository';
import { attempt } from '../../webhooks/http-attempt';
import { signatureHeaders } from '../../webhooks/signing';
import type { Viewer } from '../auth/viewer';
import { accountScope } from '../authorization';
import { ConflictError, NotFoundError } from '../errors';
import { parseId } from '../ids';
import { ZENDESK_EVENT_VERSION, type EventEnvelope } from '../events/event-log.repository';
import type { Repositories, RepositoryFactory, Transactions } from '../repositories';
import { addressGuard, type EndpointPolicy } from './endpoint-guard';
import { unreadableSecretMessage, type SigningSecretBox } from './signing-secret';
import type { AttemptRecord, DeliveryTarget, InvocationStatus } from './webhook-invocation.repository';

/** The job that delivers one invocation (payload {invocation_id}; key: the invocation id). */
export const WEBHOOK_DELIVER_JOB = 'webhook.deliver';
/**
 * The engine's own attempt limit for a delivery job: never reached, since the delivery
 * ends the invocation itself after MAX_ATTEMPTS requests, and the breaker's waits are
 * not attempts (so the job's count must not cut the retry schedule short).
 */
const DELIVER_JOB_MAX_ATTEMPTS = 100_000;
/** How long the half-open breaker's probe holds the others back: past the request's timeout. */
const PROBE_HOLD_SECONDS = 30;

/** A delivery's request gets an answer within this, or counts as failed (the job's 60 s lease is longer). */
export const DELIVERY_TIMEOUT_MS = 12_000;
const USER_AGENT = 'helpdesk-oauth-voice webhooks';
/** The type of the event a test sends (POST /webhooks/{id}/test). */
const TEST_EVENT_TYPE = 'zen:event-type:webhook.test';

/** What a test send got: the receiver's status and the first KB of its answer, or why there was none. */
export interface TestResult {
  status: number | null;
  body: string | null;
  error: string | null;
}

/** A webhook's request for an envelope: the envelope as JSON, signed; `messageId` is the webhook-id header (the same on every retry). */
export function deliveryRequest(webhook: { endpoint: string; httpMethod: string }, envelope: EventEnvelope, secret: string, messageId: string, at: Date) {
  const body = JSON.stringify(envelope);
  return {
    url: webhook.endpoint,
    method: webhook.httpMethod,
    body,
    headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': USER_AGENT, ...signatureHeaders({ secret, body, messageId, at }) },
  };
}

/** A delivery, ready to send: the invocation, its webhook, the event and the signing secret. */
export interface Delivery {
  target: DeliveryTarget & { webhook: NonNullable<DeliveryTarget['webhook']> };
  envelope: EventEnvelope;
  secret: string;
}

/**
 * The stored side of webhook deliveries (docs/api.md, "Webhook deliveries"): the
 * fan-out of an event to the subscribed webhooks, what one delivery sends, its
 * attempts, and the webhook's circuit breaker. The HTTP request itself is made by the
 * delivery job (src/jobs/webhook-deliver.job.ts).
 */
export class WebhookDeliveryService {
  /** What may be said of an address a delivery connects to (the endpoint guard, unless private endpoints are allowed). */
  readonly addressCheck: (address: string) => string | undefined;

  constructor(
    private readonly db: Transactions,
    private readonly repos: Repositories,
    private readonly factory: RepositoryFactory,
    private readonly box: SigningSecretBox,
    policy: Pick<EndpointPolicy, 'allowPrivate'>,
  ) {
    this.addressCheck = addressGuard(policy);
  }

  /**
   * An invocation and a delivery job for every active webhook of the event's account
   * subscribed to its type, in one statement; a second run adds nothing. The number
   * of invocations created.
   */
  async fanOut(accountId: bigint, eventId: string): Promise<number> {
    // one statement: the invocations and their delivery jobs (keyed by the invocation: one at a time)
    return this.repos.invocations.fanOut({ accountId }, eventId, { kind: WEBHOOK_DELIVER_JOB, maxAttempts: DELIVER_JOB_MAX_ATTEMPTS });
  }

  /** What to send for this invocation; a reason instead when it must end without a request; null when it is gone or over. */
  async delivery(accountId: bigint, invocationId: bigint): Promise<Delivery | { end: string } | null> {
    const scope = { accountId };
    const target = await this.repos.invocations.target(scope, invocationId);
    if (!target || target.invocation.status === 'success' || target.invocation.status === 'failed') return null;
    if (!target.webhook) return { end: 'the webhook was deleted' };
    if (target.webhook.status !== 'active') return { end: 'the webhook is inactive' };
    const envelope = await this.repos.eventLog.find(scope, target.invocation.eventId);
    if (!envelope) return { end: 'the event is no longer kept' };
    const secret = this.box.open(accountId, target.webhook.sealedSecret);
    if (secret === null) return { end: unreadableSecretMessage(target.webhook.id) };
    return { target: target as Delivery['target'], envelope, secret };
  }

  /**
   * Sends a test event to the webhook now (whatever its status), through the same guard
   * and signature as a delivery; nothing is recorded and the breaker is not consulted.
   */
  async test(viewer: Viewer, rawId: unknown): Promise<TestResult> {
    const scope = accountScope(viewer);
    const id = parseId(rawId);
    const webhook = id === null ? null : await this.repos.webhooks.find(scope, id);
    const sealed = webhook && (await this.repos.webhooks.readSecret(scope, webhook.id));
    if (!webhook || !sealed) throw new NotFoundError();
    const at = new Date();
    const envelope: EventEnvelope = {
      type: TEST_EVENT_TYPE, account_id: Number(viewer.accountId), id: randomUUID(), time: at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      zendesk_event_version: ZENDESK_EVENT_VERSION, subject: `zen:webhook:${webhook.id}`, detail: { id: String(webhook.id), name: webhook.name }, event: {},
    };
    const secret = this.box.open(viewer.accountId, sealed);
    if (secret === null) throw new ConflictError(unreadableSecretMessage(webhook.id));
    const request = deliveryRequest(webhook, envelope, secret, envelope.id, at);
    const result = await attempt({ ...request, timeoutMs: DELIVERY_TIMEOUT_MS, check: this.addressCheck });
    return result.kind === 'response' ? { status: result.status, body: result.body, error: null } : { status: null, body: null, error: result.reason };
  }

  /** Ends an invocation without a request (its webhook inactive or deleted). */
  async end(accountId: bigint, invocationId: bigint, reason: string): Promise<void> {
    // false: already ended (a second run of the job)
    await this.repos.invocations.fail({ accountId }, invocationId, reason);
  }

  /**
   * The breaker's word for a delivery now: null (send), or the time to wait until. When a
   * pause is over, one delivery (the probe) is let through and the others keep waiting.
   */
  async gate(accountId: bigint, webhook: Delivery['target']['webhook'], now = new Date()): Promise<Date | null> {
    const state: BreakerState = { consecutiveFailures: webhook.consecutiveFailures, failingSince: webhook.failingSince, openUntil: webhook.pausedUntil };
    const gate = breakerGate(state, now);
    if (gate === 'closed') return null;
    if (gate !== 'probe') return gate.waitUntil;
    const hold = new Date(now.getTime() + PROBE_HOLD_SECONDS * 1000);
    return (await this.repos.invocations.takeProbe({ accountId }, webhook.id, hold)) ? null : hold;
  }

  /**
   * Records an attempt, the invocation's new status, and the webhook's breaker state
   * after it (deactivated, and audited as the system's change, after a day of failures).
   */
  async recordAttempt(
    delivery: Delivery,
    attempt: Omit<AttemptRecord, 'id' | 'invocationId'>,
    outcome: { status: InvocationStatus; reason: string | null; delivered: boolean },
  ): Promise<void> {
    const { invocation, webhook } = delivery.target;
    const scope = { accountId: invocation.accountId };
    if (outcome.delivered) {
      // a success makes the breaker healthy whatever it was (afterAttempt): one statement, no lock held
      // on the webhook's row unless its breaker has something to clear (deliveries of one webhook run side by side)
      await this.repos.invocations.recordAttempt(scope, invocation.id, attempt, outcome.status, outcome.reason, { webhookId: webhook.id });
      return;
    }
    await tenantTransaction(this.db, async (sql) => {
      const repos = this.factory(sql);
      await repos.invocations.recordAttempt(scope, invocation.id, attempt, outcome.status, outcome.reason);
      const before = await repos.invocations.lockBreaker(scope, webhook.id);
      if (!before) return;
      const after = afterAttempt(before, outcome.delivered, new Date());
      await repos.invocations.saveBreaker(scope, webhook.id, after.state, after.deactivate);
      if (after.deactivate) {
        await recordAudit(sql, systemActor(invocation.accountId, { via: 'system' }), {
          action: 'update', sourceType: 'webhook', sourceId: webhook.id, sourceLabel: webhook.name, changedFields: ['status', 'deactivated_reason'],
          description: `Deactivated by the service: ${after.deactivate}`,
        });
      }
    });
  }
}
