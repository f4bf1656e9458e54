import type { PrismaClient, Prisma } from '../../generated/prisma/client';
import type { Limits } from '../../config';
import { NotFoundError, Validator } from '../errors';
import { parseId } from '../ids';
import type { Viewer } from '../auth/viewer';
import { checkCallbackRequest, type CallbackRequestInput } from './callback-request.validation';
import { takeSlot } from './rolling-window';

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
// A creation waits its turn behind the account's other creations (the advisory
// lock); a burst of a hundred must not hit Prisma's 2 s / 5 s defaults.
const TRANSACTION_OPTIONS = { maxWait: 20_000, timeout: 20_000 };

/** Voice callback requests of the viewer's account (API.md §7). Authorization is checked by the caller. */
export class CallbackRequestService {
  constructor(private readonly prisma: PrismaClient, private readonly limits: Pick<Limits, 'callbackRequests' | 'callbackWindowSeconds'>) {}

  /**
   * Validates, then spends one slot of the account's rolling window and stores
   * the request in the same transaction: a refused or failed request costs nothing.
   */
  async create(viewer: Viewer, input: CallbackRequestInput): Promise<CreatedCallbackRequest> {
    const accountId = viewer.accountId;
    const { phoneNumberId, requesterPhoneNumber, requested, routed } = await this.validate(accountId, input);
    const created = await this.prisma.$transaction(async (tx) => {
      const slot = await takeSlot(tx, {
        accountId, bucket: RATE_LIMIT_BUCKET, limit: this.limits.callbackRequests, windowSeconds: this.limits.callbackWindowSeconds,
      });
      const row = await tx.callbackRequest.create({
        data: {
          accountId,
          phoneNumberId,
          requesterPhoneNumber,
          requestedGroupIds: requested,
          routedGroupIds: routed,
          status: 'queued',
          createdById: viewer.userId,
          createdAt: slot.at,
        },
        select: SELECT,
      });
      return { ...row, rateLimit: { limit: slot.limit, remaining: slot.remaining } };
    }, TRANSACTION_OPTIONS);
    // After the commit: the lock is held only for the decision and the inserts.
    const [position] = await this.queuePositions([created]);
    return { ...created, queuePosition: position };
  }

  /** Every field rule, the ones needing the database included; the routing that follows from them. */
  private async validate(accountId: bigint, input: CallbackRequestInput) {
    const v = new Validator();
    const fields = checkCallbackRequest(input, v);
    const [phone, groups, account] = await Promise.all([
      fields.phoneNumberId === undefined ? null
        : this.prisma.voicePhoneNumber.findFirst({ where: { id: fields.phoneNumberId, accountId }, select: { id: true } }),
      fields.groupIds?.length ? this.prisma.group.findMany({ where: { accountId, id: { in: fields.groupIds } }, select: { id: true } }) : [],
      this.prisma.account.findUnique({ where: { id: accountId }, select: { omnichannelRouting: true } }),
    ]);
    if (fields.phoneNumberId !== undefined && !phone) v.add('phone_number_id', 'NotFound', `Phone number: ${fields.phoneNumberId} not found`);
    const known = new Set(groups.map((g) => g.id));
    for (const id of fields.groupIds ?? []) if (!known.has(id)) v.add('group_ids', 'NotFound', `Group: ${id} not found`);
    v.throwIfAny();
    if (!account) throw new NotFoundError();
    const requested = fields.groupIds!;
    return {
      phoneNumberId: fields.phoneNumberId!,
      requesterPhoneNumber: fields.requesterPhoneNumber!,
      requested,
      // With omnichannel routing the first group is the one that routes (seed §2.3).
      routed: account.omnichannelRouting ? requested.slice(0, 1) : requested,
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
