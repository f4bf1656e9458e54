import { createHmac } from 'node:crypto';
import { BadRequestError } from './errors';
import { constantTimeEqual } from './crypto';

const MAX_PAGE_SIZE = 100;
const MAX_OFFSET_RECORDS = 10_000;

/** Keyset page request: forward (after) or backward (before), size 1..100. */
export interface KeysetPage {
  size: number;
  after?: bigint;
  before?: bigint;
}

export interface OffsetPage {
  page: number;
  perPage: number;
}

/** A keyset page as a list reads it: backward without `before` is the last `size` records. */
export interface KeysetRequest extends KeysetPage {
  backward: boolean;
}

export interface PageResult<T> {
  items: T[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/** A page of a list, with the size of the whole list (counted when asked for). */
export interface Page<T> extends PageResult<T> {
  count: () => Promise<number>;
}

/**
 * How one list reads its records, already scoped to the viewer and its filter: what a
 * service hands to readPage(). A list without offset pages leaves `offset` out.
 */
export interface PageSource<T> {
  keyset(page: KeysetRequest): Promise<PageResult<T>>;
  offset?(page: OffsetPage): Promise<T[]>;
  count(): Promise<number>;
}

/**
 * A keyset page from the rows a repository read in its reading direction (one more than
 * the page's size, so that the extra row says whether there is more): in the list's order,
 * with the flags of a Relay page. `backward`: the rows were read before a cursor (or from
 * the end), in reverse.
 */
export function keysetPageOf<R, T>(rows: R[], page: KeysetPage, backward: boolean, toRecord: (row: R) => T): PageResult<T> {
  const more = rows.length > page.size;
  const items = rows.slice(0, page.size).map(toRecord);
  if (backward) items.reverse();
  return {
    items,
    hasNextPage: backward ? page.before !== undefined : more,
    hasPreviousPage: backward ? more : page.after !== undefined,
  };
}

/** Past the largest id: where a backward page without a cursor starts, in an id-ascending list. */
const END_OF_IDS = 9223372036854775807n;

/**
 * Opaque cursors: the id, signed with the server key so that a tampered or
 * foreign cursor is refused (400) instead of silently moving the window.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(`cursor:${payload}`).digest('base64url').slice(0, 16);
  }

  encode(id: bigint): string {
    const payload = Buffer.from(String(id)).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  decode(cursor: string): bigint {
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined || !constantTimeEqual(signature, this.sign(payload))) {
      throw new BadRequestError('Invalid pagination cursor');
    }
    const text = Buffer.from(payload, 'base64url').toString('utf8');
    if (!/^[1-9]\d{0,18}$/.test(text)) throw new BadRequestError('Invalid pagination cursor');
    return BigInt(text);
  }
}

/** Clamps a requested page size into 1..100 (absent → 100); below 1 is an error. */
function clampSize(raw: number | undefined | null, fallback = MAX_PAGE_SIZE): number {
  if (raw === undefined || raw === null) return fallback;
  if (!Number.isInteger(raw) || raw < 1) throw new BadRequestError('Page size must be a positive integer');
  return Math.min(raw, MAX_PAGE_SIZE);
}

/** The page arguments a connection may take (Relay's, and offset ones for REST compatibility). */
export interface PageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  page?: number | null;
  perPage?: number | null;
}

export type PageRequest =
  | { mode: 'offset'; page: number; perPage: number }
  | { mode: 'keyset'; size: number; backward: boolean; after?: string; before?: string };

/**
 * How a connection's arguments choose its page: offset when `page` or `perPage`
 * is given, else keyset (backward when `before` is given, or `last` without
 * `first`). The resolvers page by it, and the GraphQL cost estimate sizes the
 * connection by it (pageSize), so that the two cannot disagree.
 */
export function pageRequest(args: PageArgs, defaultSize = MAX_PAGE_SIZE): PageRequest {
  if (args.page != null || args.perPage != null) return { mode: 'offset', page: args.page ?? 1, perPage: clampSize(args.perPage, defaultSize) };
  if (args.after && args.before) throw new BadRequestError('Use either after or before, not both');
  const backward = args.before != null || (args.last != null && args.first == null);
  return {
    mode: 'keyset',
    size: clampSize(backward ? args.last : args.first, defaultSize),
    backward,
    after: args.after ?? undefined,
    before: args.before ?? undefined,
  };
}

/** The number of records a page request can return. */
export function pageSize(request: PageRequest): number {
  return request.mode === 'offset' ? request.perPage : request.size;
}

export function checkOffsetPage(page: OffsetPage): void {
  if (!Number.isInteger(page.page) || page.page < 1) throw new BadRequestError('page must be a positive integer');
  if (page.page * page.perPage > MAX_OFFSET_RECORDS) {
    throw new BadRequestError(`Offset pagination is limited to the first ${MAX_OFFSET_RECORDS} records; use cursor pagination (page[size], page[after]) to go further`);
  }
}

/**
 * For an id-ascending list whose repository pages backward only from a `before` id:
 * a backward page without a cursor (`last` alone) reads from past the last id.
 */
export function fromTheEnd(page: KeysetRequest): KeysetPage {
  return page.backward && page.before === undefined ? { size: page.size, before: END_OF_IDS } : page;
}

/**
 * The one way a list is paged: offset pages (with their total, counted once) or keyset
 * pages from signed cursors, forward or backward. A backward page read from the end
 * has nothing after it.
 */
export async function readPage<T>(cursors: CursorCodec, request: PageRequest, source: PageSource<T>): Promise<Page<T>> {
  if (request.mode === 'offset') {
    if (!source.offset) throw new BadRequestError('This list has cursor pages only');
    const [items, total] = await Promise.all([source.offset(request), source.count()]);
    return { items, hasNextPage: request.page * request.perPage < total, hasPreviousPage: request.page > 1, count: async () => total };
  }
  const decode = (cursor: string | undefined) => (cursor === undefined ? undefined : cursors.decode(cursor));
  const page = await source.keyset({ size: request.size, after: decode(request.after), before: decode(request.before), backward: request.backward });
  const fromEnd = request.backward && request.before === undefined;
  return { ...page, hasNextPage: page.hasNextPage && !fromEnd, count: () => source.count() };
}

/** The page of a list that has offset pages only: page from 1 (default 1), perPage 1..100 (default 100, larger clamped). */
export function offsetPage(args: { page?: number | null; perPage?: number | null }): OffsetPage {
  return { page: args.page ?? 1, perPage: clampSize(args.perPage) };
}
