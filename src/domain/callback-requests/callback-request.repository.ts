import type { Db, SqlQuery } from '../../db/create-db';
import type { Prisma } from '../../generated/prisma/client';
import type { AccountScope } from '../authorization';

// The only module that reads or writes callback_requests. Creation is one
// statement (the database function create_callback_request: lookups, the
// account's rolling window and the insert); reads are scoped to the account and
// go through toRecord(), the one row mapper.

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

/** A row of create_callback_request (callback_request_lookups gives the first two columns). */
export interface CreateRow {
  phone_found: boolean;
  found_group_ids: (string | bigint)[];
  routed_group_ids?: (string | bigint)[] | null;
  new_id?: string | bigint | null;
  decided_at?: Date | null;
  used?: number | null;
  retry_after?: number | null;
  queued_ahead?: number | null;
}

export interface NewCallbackRequest {
  phoneNumberId: bigint;
  requesterPhoneNumber: string;
  groupIds: bigint[];
  /** the groups that route under either setting of the account's omnichannel routing */
  routedIfOmnichannel: bigint[];
  routedOtherwise: bigint[];
  createdById: bigint;
}

export interface CallbackRequestQuery {
  phoneNumberId?: bigint;
  status?: CallbackRequestStatus | null;
  size: number;
  after?: bigint;
}

const SELECT = {
  id: true, accountId: true, phoneNumberId: true, requesterPhoneNumber: true, requestedGroupIds: true,
  routedGroupIds: true, status: true, createdById: true, createdAt: true,
} as const;
type Row = Prisma.CallbackRequestGetPayload<{ select: typeof SELECT }>;

function toRecord(r: Row, queuePosition: number | null): CallbackRequestRecord {
  return { ...r, status: r.status as CallbackRequestStatus, queuePosition };
}

export class CallbackRequestRepository {
  constructor(private readonly db: Pick<Db, 'sql' | 'prisma'>) {}

  /** Checks the ids, spends a slot of the window and stores the request; no row: no such account. */
  async create(scope: AccountScope, input: NewCallbackRequest, window: { bucket: string; limit: number; seconds: number }): Promise<CreateRow | undefined> {
    const ids = (list: bigint[]) => list.map(String);
    const [row] = await this.db.sql<CreateRow>(
      'SELECT * FROM create_callback_request($1::bigint, $2::bigint, $3::text, $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint, $8::text, $9::int, $10::int)',
      [
        String(scope.accountId), String(input.phoneNumberId), input.requesterPhoneNumber, ids(input.groupIds), ids(input.routedIfOmnichannel),
        ids(input.routedOtherwise), String(input.createdById), window.bucket, window.limit, window.seconds,
      ],
    );
    return row;
  }

  /** Only the lookups of create (for a request with shape errors, so that its 422 lists every problem). */
  async lookups(scope: AccountScope, phoneNumberId: bigint | undefined, groupIds: bigint[]): Promise<CreateRow | undefined> {
    const [row] = await this.db.sql<CreateRow>('SELECT * FROM callback_request_lookups($1::bigint, $2::bigint, $3::bigint[])', [
      String(scope.accountId),
      phoneNumberId === undefined ? null : String(phoneNumberId),
      groupIds.map(String),
    ]);
    return row;
  }

  /** A page of the scope's requests, id ascending (queue order), with the filter's total. */
  async list(scope: AccountScope, query: CallbackRequestQuery): Promise<{ records: CallbackRequestRecord[]; hasNextPage: boolean; totalCount: number }> {
    const where: Prisma.CallbackRequestWhereInput = { accountId: scope.accountId };
    if (query.phoneNumberId !== undefined) where.phoneNumberId = query.phoneNumberId;
    if (query.status) where.status = query.status;
    const [rows, totalCount] = await Promise.all([
      this.db.prisma.callbackRequest.findMany({
        where: query.after === undefined ? where : { ...where, id: { gt: query.after } },
        orderBy: { id: 'asc' },
        take: query.size + 1,
        select: SELECT,
      }),
      this.db.prisma.callbackRequest.count({ where }),
    ]);
    const page = rows.slice(0, query.size);
    const positions = await this.queuePositions(scope, page);
    return { records: page.map((r, i) => toRecord(r, positions[i])), hasNextPage: rows.length > query.size, totalCount };
  }

  /**
   * 1 + the queued requests of the same phone number with a smaller id, for
   * each queued row (null otherwise): one statement, one index range count per row.
   */
  private async queuePositions(scope: AccountScope, rows: Row[]): Promise<(number | null)[]> {
    const queued = rows.filter((r) => r.status === 'queued').map((r) => String(r.id));
    if (queued.length === 0) return rows.map(() => null);
    const found = await this.db.sql<{ id: string | bigint; ahead: number }>(
      `SELECT c.id, (
         SELECT count(*)::int FROM callback_requests q
          WHERE q.account_id = c.account_id AND q.phone_number_id = c.phone_number_id
            AND q.status = 'queued' AND q.id < c.id
       ) AS ahead
         FROM callback_requests c
        WHERE c.account_id = $1 AND c.id = ANY($2::bigint[])`,
      [String(scope.accountId), queued],
    );
    const ahead = new Map(found.map((f) => [BigInt(f.id), f.ahead]));
    return rows.map((r) => (ahead.has(r.id) ? ahead.get(r.id)! + 1 : null));
  }
}

/**
 * Cancels the queued and calling requests of a phone number of the scope, on the
 * caller's transaction (deleting the number); returns how many.
 */
export async function cancelOpenCallbackRequests(sql: SqlQuery, scope: AccountScope, phoneNumberId: bigint): Promise<number> {
  const rows = await sql(
    `UPDATE callback_requests SET status = 'cancelled', updated_at = now()
      WHERE account_id = $1 AND phone_number_id = $2 AND status IN ('queued', 'calling')
     RETURNING id`,
    [String(scope.accountId), String(phoneNumberId)],
  );
  return rows.length;
}
