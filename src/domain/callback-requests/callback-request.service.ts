import type { PrismaClient, Prisma } from '../../generated/prisma/client';
import type { Limits } from '../../config';
import type { Db } from '../../db/create-db';
import { NotFoundError, RateLimitedError, Validator } from '../errors';
import { parseId } from '../ids';
import type { Viewer } from '../auth/viewer';
import { checkCallbackRequest, type CallbackRequestInput } from './callback-request.validation';
import { params, windowCtes, windowLock } from './rolling-window';

export type CallbackRequestStatus = 'queued' | 'calling' | 'completed' | 'cancelled';

export interface CallbackRequestRecord {
  id: bigint;
  accountId: bigint;
  phoneNumberId: bigint;
  requesterPhoneNumber: string;
  requestedGroupIds: bigint[];
  routedGroupIds: bigint[];
  status: CallbackRequestStatus;
  /** 1 = next in its phone number's queue; null unless queued */
  queuePosition: number | null;
  createdById: bigint | null;
  createdAt: Date;
}

export interface CreatedCallbackRequest extends CallbackRequestRecord {
  /** the account's budget after this creation */
  rateLimit: { limit: number; remaining: number };
}

export interface CallbackRequestFilter {
  phoneNumberId?: unknown;
  status?: CallbackRequestStatus | null;
  /** page size, already clamped to 1..100 */
  size: number;
  /** keyset: only ids above this one */
  after?: bigint;
}

export interface CallbackRequestPage {
  records: CallbackRequestRecord[];
  hasNextPage: boolean;
  totalCount: number;
}

export const RATE_LIMIT_BUCKET = 'callback_requests';
const SELECT = {
  id: true, accountId: true, phoneNumberId: true, requesterPhoneNumber: true, requestedGroupIds: true,
  routedGroupIds: true, status: true, createdById: true, createdAt: true,
} as const;
type Row = Omit<CallbackRequestRecord, 'queuePosition'>;

/** Voice callback requests of the viewer's account (API.md §7). Authorization is checked by the caller. */
export class CallbackRequestService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly db: Pick<Db, 'sql' | 'transaction'>,
    private readonly limits: Pick<Limits, 'callbackRequests' | 'callbackWindowSeconds'>,
  ) {}

  /**
   * Validates (one statement), then spends one slot of the account's rolling
   * window and stores the request in one statement of one transaction, under the
   * account's lock: a refused or failed request costs nothing. Round trips:
   * validation, BEGIN + lock, decision + inserts + queue position, COMMIT.
   */
  async create(viewer: Viewer, input: CallbackRequestInput): Promise<CreatedCallbackRequest> {
    const accountId = viewer.accountId;
    const { phoneNumberId, requesterPhoneNumber, requested, routed } = await this.validate(accountId, input);
    const window = {
      accountId, bucket: RATE_LIMIT_BUCKET, limit: this.limits.callbackRequests, windowSeconds: this.limits.callbackWindowSeconds,
    };
    const { p, values } = params();
    const account = p(String(accountId));
    const phone = p(String(phoneNumberId));
    const text = `WITH ${windowCtes(window, p)},
      created AS (
        INSERT INTO callback_requests
          (account_id, phone_number_id, requester_phone_number, requested_group_ids, routed_group_ids, status, created_by_id, created_at)
        SELECT ${account}::bigint, ${phone}::bigint, ${p(requesterPhoneNumber)}, ${p(requested.map(String))}::bigint[],
               ${p(routed.map(String))}::bigint[], 'queued', ${p(viewer.userId === null ? null : String(viewer.userId))}::bigint, counted.at
          FROM counted WHERE counted.used < ${p(window.limit)}::int
        RETURNING id
      )
      SELECT counted.at, counted.used, counted.retry_after, created.id,
             -- the snapshot predates the insert: every queued request of this number is ahead of it
             (SELECT count(*)::int FROM callback_requests q
               WHERE q.account_id = ${account}::bigint AND q.phone_number_id = ${phone}::bigint AND q.status = 'queued') AS ahead
        FROM counted LEFT JOIN created ON true`;
    const [row] = await this.db.transaction(
      (sql) => sql<{ at: Date; used: number; retry_after: number | null; id: string | bigint | null; ahead: number }>(text, values),
      windowLock(window),
    );
    if (row.id === null) {
      throw new RateLimitedError(row.retry_after ?? 1, `Rate limit exceeded: at most ${window.limit} per ${window.windowSeconds} seconds`, window.limit);
    }
    return {
      id: BigInt(row.id),
      accountId,
      phoneNumberId,
      requesterPhoneNumber,
      requestedGroupIds: requested,
      routedGroupIds: routed,
      status: 'queued',
      queuePosition: row.ahead + 1,
      createdById: viewer.userId,
      createdAt: new Date(row.at),
      rateLimit: { limit: window.limit, remaining: window.limit - row.used - 1 },
    };
  }

  /** Every field rule, the ones needing the database included (one statement); the routing that follows from them. */
  private async validate(accountId: bigint, input: CallbackRequestInput) {
    const v = new Validator();
    const fields = checkCallbackRequest(input, v);
    const [found] = await this.db.sql<{ omnichannel_routing: boolean; phone_id: unknown; group_ids: unknown[] }>(
      `SELECT a.omnichannel_routing,
              (SELECT p.id FROM voice_phone_numbers p WHERE p.id = $2::bigint AND p.account_id = a.id) AS phone_id,
              ARRAY(SELECT g.id FROM groups g WHERE g.account_id = a.id AND g.id = ANY($3::bigint[])) AS group_ids
         FROM accounts a WHERE a.id = $1::bigint`,
      [String(accountId), fields.phoneNumberId === undefined ? null : String(fields.phoneNumberId), (fields.groupIds ?? []).map(String)],
    );
    if (fields.phoneNumberId !== undefined && (!found || found.phone_id === null)) {
      v.add('phone_number_id', 'NotFound', `Phone number: ${fields.phoneNumberId} not found`);
    }
    const known = new Set((found?.group_ids ?? []).map((id) => BigInt(id as string)));
    for (const id of fields.groupIds ?? []) if (!known.has(id)) v.add('group_ids', 'NotFound', `Group: ${id} not found`);
    v.throwIfAny();
    if (!found) throw new NotFoundError();
    const requested = fields.groupIds!;
    return {
      phoneNumberId: fields.phoneNumberId!,
      requesterPhoneNumber: fields.requesterPhoneNumber!,
      requested,
      // With omnichannel routing the first group is the one that routes (seed §2.3).
      routed: found.omnichannel_routing ? requested.slice(0, 1) : requested,
    };
  }

  /** A page of the account's requests, id ascending (queue order), with the filter's total. */
  async list(viewer: Viewer, filter: CallbackRequestFilter): Promise<CallbackRequestPage> {
    const { size: take, after } = filter;
    const where: Prisma.CallbackRequestWhereInput = { accountId: viewer.accountId };
    if (filter.phoneNumberId !== undefined && filter.phoneNumberId !== null) {
      const id = parseId(filter.phoneNumberId);
      if (id === null) return { records: [], hasNextPage: false, totalCount: 0 };
      where.phoneNumberId = id;
    }
    if (filter.status) where.status = filter.status;
    const [rows, totalCount] = await Promise.all([
      this.prisma.callbackRequest.findMany({
        where: after === undefined ? where : { ...where, id: { gt: after } },
        orderBy: { id: 'asc' },
        take: take + 1,
        select: SELECT,
      }),
      this.prisma.callbackRequest.count({ where }),
    ]);
    const page = rows.slice(0, take);
    const positions = await this.queuePositions(page);
    return { records: page.map((r, i) => ({ ...r, queuePosition: positions[i] })), hasNextPage: rows.length > take, totalCount };
  }

  /**
   * 1 + the queued requests of the same phone number with a smaller id, for
   * each queued row (null otherwise): one statement, one index range count per row.
   */
  private async queuePositions(rows: Row[]): Promise<(number | null)[]> {
    const queued = rows.filter((r) => r.status === 'queued').map((r) => r.id);
    if (queued.length === 0) return rows.map(() => null);
    const found = await this.prisma.$queryRaw<{ id: bigint; ahead: number }[]>`
      SELECT c.id, (
        SELECT count(*)::int FROM callback_requests q
        WHERE q.account_id = c.account_id AND q.phone_number_id = c.phone_number_id
          AND q.status = 'queued' AND q.id < c.id
      ) AS ahead
      FROM callback_requests c
      WHERE c.id = ANY(${queued}::bigint[])`;
    const ahead = new Map(found.map((f) => [BigInt(f.id), f.ahead]));
    return rows.map((r) => (ahead.has(r.id) ? ahead.get(r.id)! + 1 : null));
  }
}
