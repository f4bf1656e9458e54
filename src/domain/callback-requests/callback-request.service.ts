import type { Limits } from '../../config';
import { NotFoundError, RateLimitedError, Validator } from '../errors';
import { parseId } from '../ids';
import { accountScope } from '../authorization';
import type { Viewer } from '../auth/viewer';
import type {
  CallbackHistoryEntry, CallbackRequestRecord, CallbackRequestRepository, CallbackRequestStatus, CallbackRequestView, CallbackRequestViews,
} from './callback-request.repository';
import type { CallbackLifecycleService } from '../voice/callback-lifecycle.service';
import { checkCallbackRequest, type CallbackRequestInput } from './callback-request.validation';

export type { CallbackRequestView } from './callback-request.repository';

export interface CreatedCallbackRequest extends CallbackRequestRecord {
  /** the account's budget after this creation */
  rateLimit: { limit: number; remaining: number };
}

export interface CallbackRequestFilter {
  phoneNumberId?: unknown;
  agentId?: unknown;
  status?: CallbackRequestStatus | null;
  /** page size, already clamped to 1..100 */
  size: number;
  /** keyset: only ids above this one */
  after?: bigint;
}

export interface CallbackRequestPage {
  records: CallbackRequestView[];
  hasNextPage: boolean;
  /** the filter's total, all pages: a statement of its own, run only when asked for */
  count: () => Promise<number>;
}

const RATE_LIMIT_BUCKET = 'callback_requests';
/** With omnichannel routing only the first requested group routes; otherwise all do (docs/api.md, "Voice callback requests"). */
function routedGroups(requested: bigint[], omnichannelRouting: boolean): bigint[] {
  return omnichannelRouting ? requested.slice(0, 1) : requested;
}

/** Voice callback requests of the viewer's account (docs/api.md, "Voice callback requests"): validation, routing, the account's window. */
export class CallbackRequestService {
  constructor(
    private readonly requests: CallbackRequestRepository,
    private readonly limits: Pick<Limits, 'callbackRequests' | 'callbackWindowSeconds'>,
    private readonly lifecycle: Pick<CallbackLifecycleService, 'dispatch'>,
  ) {}

  /**
   * One statement (the database function create_callback_request, see its
   * migration): the account's ids are checked, then, under the account's lock,
   * one slot of its rolling window is spent and the request stored, or nothing
   * at all happens. A request with shape errors runs only the lookups, so that
   * its 422 lists every problem at once.
   */
  async create(viewer: Viewer, input: CallbackRequestInput): Promise<CreatedCallbackRequest> {
    const scope = accountScope(viewer);
    const v = new Validator();
    const fields = checkCallbackRequest(input, v);
    const groupIds = fields.groupIds ?? [];
    const limit = this.limits.callbackRequests;
    const seconds = this.limits.callbackWindowSeconds;
    const row = v.isEmpty()
      ? await this.requests.create(
          scope,
          {
            phoneNumberId: fields.phoneNumberId!, requesterPhoneNumber: fields.requesterPhoneNumber!, groupIds,
            routedIfOmnichannel: routedGroups(groupIds, true), routedOtherwise: routedGroups(groupIds, false), createdById: viewer.userId,
          },
          { bucket: RATE_LIMIT_BUCKET, limit, seconds },
        )
      : await this.requests.lookups(scope, fields.phoneNumberId, groupIds);
    if (fields.phoneNumberId !== undefined && (!row || !row.phone_found)) {
      v.add('phone_number_id', 'NotFound', `Phone number: ${fields.phoneNumberId} not found`);
    }
    const known = new Set((row?.found_group_ids ?? []).map((id) => BigInt(id)));
    for (const id of groupIds) if (!known.has(id)) v.add('group_ids', 'NotFound', `Group: ${id} not found`);
    v.throwIfAny();
    if (!row) throw new NotFoundError();
    if (row.new_id === null || row.new_id === undefined) {
      throw new RateLimitedError(row.retry_after ?? 1, `Rate limit exceeded: at most ${limit} per ${seconds} seconds`, limit);
    }
    // an agent free now gets the offer at once (the request is committed: any process may route it); with
    // none free (the creation statement says), nothing more is spent. Should routing fail here, the
    // request is stored all the same: the next trigger, or the sweep, routes it.
    const offered = row.agent_free ? await this.lifecycle.dispatch(scope).catch(() => 0) : 0;
    // an offer went out, but maybe of an older request (queue order): say what became of this one
    const routed = offered > 0 ? (await this.requests.find(scope, BigInt(row.new_id))).views[0] : null;
    return {
      id: BigInt(row.new_id),
      accountId: scope.accountId,
      phoneNumberId: fields.phoneNumberId!,
      requesterPhoneNumber: fields.requesterPhoneNumber!,
      requestedGroupIds: groupIds,
      routedGroupIds: row.routed_group_ids!.map((id) => BigInt(id)),
      status: routed?.status ?? 'queued',
      queuePosition: routed ? routed.queuePosition : row.queued_ahead! + 1,
      createdById: viewer.userId,
      createdAt: new Date(row.decided_at!),
      agentId: routed?.agentId ?? null,
      attempts: 0,
      updatedAt: routed?.updatedAt ?? null,
      completedAt: null,
      rateLimit: { limit, remaining: limit - row.used! - 1 },
    };
  }

  /** A page of the account's requests, id ascending (queue order), and the filter's total. */
  async list(viewer: Viewer, filter: CallbackRequestFilter): Promise<CallbackRequestPage> {
    const phoneNumberId = idFilter(filter.phoneNumberId);
    const agentId = idFilter(filter.agentId);
    if (phoneNumberId === null || agentId === null) return { records: [], hasNextPage: false, count: async () => 0 };
    const scope = accountScope(viewer);
    const { views, factors, hasNextPage, count } = await this.requests.list(scope, { phoneNumberId, agentId, status: filter.status, size: filter.size, after: filter.after });
    return { records: estimated(views, factors), hasNextPage, count };
  }

  /** A request of the account with its history; null when there is none with this id. */
  async find(viewer: Viewer, rawId: unknown): Promise<CallbackRequestView | null> {
    const id = parseId(rawId);
    if (id === null) return null;
    const { views, factors } = await this.requests.find(accountScope(viewer), id);
    return views.length === 0 ? null : estimated(views, factors)[0];
  }
}

/**
 * The views with their estimated wait: queue position × the mean handling time of recent
 * callbacks ÷ the agents online (at least one); null when not queued or no callback completed
 * yet. Set in place: the views are this read's own objects (a copy of each row cost ~4 % of
 * the queue read's CPU).
 */
function estimated(views: CallbackRequestView[], factors: CallbackRequestViews['factors']): CallbackRequestView[] {
  if (!factors || factors.handleSeconds === null) return views;
  for (const v of views) if (v.queuePosition !== null) v.estimatedWaitTime = Math.round((v.queuePosition * factors.handleSeconds) / Math.max(1, factors.agentsOnline));
  return views;
}

/** A filter's id: undefined when absent, null when it names nothing (no record matches). */
function idFilter(raw: unknown): bigint | undefined | null {
  if (raw === undefined || raw === null) return undefined;
  return parseId(raw);
}

export type { CallbackHistoryEntry };
