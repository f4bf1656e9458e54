import type { PrismaClient, Prisma } from '../../generated/prisma/client';
import type { Limits } from '../../config';
import type { Db } from '../../db/create-db';
import { NotFoundError, RateLimitedError, Validator } from '../errors';
import { parseId } from '../ids';
import type { Viewer } from '../auth/viewer';
import { checkCallbackRequest, type CallbackRequestInput } from './callback-request.validation';

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

/** With omnichannel routing only the first requested group routes; otherwise all do (seed §2.3). */
export function routedGroups(requested: bigint[], omnichannelRouting: boolean): bigint[] {
  return omnichannelRouting ? requested.slice(0, 1) : requested;
}

/** A row of create_callback_request (callback_request_lookups gives the first two columns). */
interface CreateRow {
  phone_found: boolean;
  found_group_ids: (string | bigint)[];
  routed_group_ids?: (string | bigint)[] | null;
  new_id?: string | bigint | null;
  decided_at?: Date | null;
  used?: number | null;
  retry_after?: number | null;
  queued_ahead?: number | null;
}

/** Voice callback requests of the viewer's account (API.md §7). Authorization is checked by the caller. */
export class CallbackRequestService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly db: Pick<Db, 'sql'>,
    private readonly limits: Pick<Limits, 'callbackRequests' | 'callbackWindowSeconds'>,
  ) {}

  /**
   * One statement (the database function create_callback_request, see its
   * migration): the account's ids are checked, then, under the account's lock,
   * one slot of its rolling window is spent and the request stored, or nothing
   * at all happens. A request with shape errors runs only the lookups, so that
   * its 422 lists every problem at once.
   */
  async create(viewer: Viewer, input: CallbackRequestInput): Promise<CreatedCallbackRequest> {
    const accountId = viewer.accountId;
    const v = new Validator();
    const fields = checkCallbackRequest(input, v);
    const groups = (fields.groupIds ?? []).map(String);
    const phone = fields.phoneNumberId === undefined ? null : String(fields.phoneNumberId);
    const limit = this.limits.callbackRequests;
    const windowSeconds = this.limits.callbackWindowSeconds;
    const routed = (omnichannel: boolean) => routedGroups(fields.groupIds ?? [], omnichannel).map(String);
    const [row] = v.isEmpty()
      ? await this.db.sql<CreateRow>(
          'SELECT * FROM create_callback_request($1::bigint, $2::bigint, $3::text, $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint, $8::text, $9::int, $10::int)',
          [
            String(accountId), phone, fields.requesterPhoneNumber, groups, routed(true), routed(false),
            viewer.userId === null ? null : String(viewer.userId), RATE_LIMIT_BUCKET, limit, windowSeconds,
          ],
        )
      : await this.db.sql<CreateRow>('SELECT * FROM callback_request_lookups($1::bigint, $2::bigint, $3::bigint[])', [String(accountId), phone, groups]);
    if (fields.phoneNumberId !== undefined && (!row || !row.phone_found)) {
      v.add('phone_number_id', 'NotFound', `Phone number: ${fields.phoneNumberId} not found`);
    }
    const known = new Set((row?.found_group_ids ?? []).map((id) => BigInt(id)));
    for (const id of fields.groupIds ?? []) if (!known.has(id)) v.add('group_ids', 'NotFound', `Group: ${id} not found`);
    v.throwIfAny();
    if (!row) throw new NotFoundError();
    if (row.new_id === null || row.new_id === undefined) {
      throw new RateLimitedError(row.retry_after ?? 1, `Rate limit exceeded: at most ${limit} per ${windowSeconds} seconds`, limit);
    }
    return {
      id: BigInt(row.new_id!),
      accountId,
      phoneNumberId: fields.phoneNumberId!,
      requesterPhoneNumber: fields.requesterPhoneNumber!,
      requestedGroupIds: fields.groupIds!,
      routedGroupIds: row.routed_group_ids!.map((id) => BigInt(id)),
      status: 'queued',
      queuePosition: row.queued_ahead! + 1,
      createdById: viewer.userId,
      createdAt: new Date(row.decided_at!),
      rateLimit: { limit, remaining: limit - row.used! - 1 },
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
