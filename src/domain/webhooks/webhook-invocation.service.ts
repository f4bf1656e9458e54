import type { Viewer } from '../auth/viewer';
import { accountScope } from '../authorization';
import { BadRequestError, NotFoundError } from '../errors';
import { parseId } from '../ids';
import { fromTheEnd, type PageSource } from '../pagination';
import type { WebhookRepository } from './webhook.repository';
import { INVOCATION_STATUSES, type AttemptRecord, type InvocationFilter, type InvocationRecord, type WebhookInvocationRepository } from './webhook-invocation.repository';

export type { AttemptRecord, InvocationFilter, InvocationRecord } from './webhook-invocation.repository';

/**
 * What a webhook sent (docs/api.md, "Webhook deliveries"): its invocations (one per event)
 * and their attempts, for the admins of its account. Kept 7 days.
 */
export class WebhookInvocationService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly invocations: WebhookInvocationRepository,
  ) {}

  /** The webhook's invocations of the filter, id ascending, in keyset pages; NotFound when the account has no such webhook. */
  async pages(viewer: Viewer, rawWebhookId: unknown, filter: InvocationFilter = {}): Promise<PageSource<InvocationRecord>> {
    const scope = accountScope(viewer);
    const webhookId = parseId(rawWebhookId) ?? notFound();
    if (filter.status !== undefined && !INVOCATION_STATUSES.includes(filter.status)) throw new BadRequestError(`The status filter must be one of ${INVOCATION_STATUSES.join(', ')}`);
    if (filter.eventType !== undefined && (filter.eventType.includes('\u0000') || filter.eventType.length > 255)) {
      throw new BadRequestError('The event type filter must be at most 255 characters, without NUL');
    }
    if (!(await this.webhooks.find(scope, webhookId))) notFound();
    return {
      keyset: (page) => this.invocations.listKeyset(scope, webhookId, filter, fromTheEnd(page)),
      count: () => this.invocations.count(scope, webhookId, filter),
    };
  }

  /** The attempts of one invocation of the webhook, oldest first; NotFound when the account has no such invocation of it. */
  async attempts(viewer: Viewer, rawWebhookId: unknown, rawInvocationId: unknown): Promise<AttemptRecord[]> {
    const scope = accountScope(viewer);
    const webhookId = parseId(rawWebhookId) ?? notFound();
    const invocationId = parseId(rawInvocationId) ?? notFound();
    if (!(await this.invocations.find(scope, webhookId, invocationId))) notFound();
    return this.invocations.attempts(scope, invocationId);
  }
}

function notFound(): never {
  throw new NotFoundError();
}
