// The pagination of the /api/v2 lists (docs/api.md "Pagination"), in one place: which
// mode a query asks for, the GraphQL page arguments it stands for, and the fields an
// answer adds beside its records. The parameters are typed and read by the routes'
// schemas (PageQuery, OffsetPageQuery in src/rest/schemas.ts).

/** The page parameters of a list's query string. */
interface PageQueryValues {
  'page[size]'?: number;
  'page[after]'?: string;
  'page[before]'?: string;
  page?: number;
  per_page?: number;
}

/** What a list route knows of its request: the query, and where links point. */
interface ListRequest<Q extends PageQueryValues> {
  query: Q;
  baseUrl: string;
  url: string;
}

interface CursorPageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor?: string | null;
  endCursor?: string | null;
}

/** The request URL made absolute, with some parameters replaced (others kept). */
function linkTo(baseUrl: string, requestUrl: string, set: Record<string, string | number | undefined>): string {
  const url = new URL(requestUrl, `${baseUrl}/`);
  const target = new URL(url.pathname + url.search, baseUrl);
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) target.searchParams.delete(k);
    else target.searchParams.set(k, String(v));
  }
  return target.toString();
}

/** Cursor mode is chosen by any page[…] parameter; a list with both modes pages by offset otherwise. */
const isCursorMode = (q: PageQueryValues) => q['page[size]'] !== undefined || q['page[after]'] !== undefined || q['page[before]'] !== undefined;

/** Reading backward: page[before] given (and not empty). */
const isBackward = (q: PageQueryValues) => Boolean(q['page[before]']);

/** Cursor mode: the connection's arguments, forward (first/after) or backward (last/before). */
export function cursorVariables(q: PageQueryValues): { first?: number; after?: string } | { last?: number; before: string } {
  const size = q['page[size]'];
  const before = q['page[before]'] || undefined;
  return before ? { last: size, before } : { first: size, after: q['page[after]'] || undefined };
}

/** Offset mode: page from 1, per_page 1..100 (larger values clamped below). */
export function offsetVariables(q: PageQueryValues): { page: number; perPage: number } {
  return { page: q.page ?? 1, perPage: q.per_page ?? 100 };
}

/** A list with both modes: its page arguments, and whether its operation asks for totalCount (offset mode only). */
export function pageVariables(q: PageQueryValues) {
  return isCursorMode(q) ? { ...cursorVariables(q), withCount: false } : { ...offsetVariables(q), withCount: true };
}

/** The cursor mode's `meta` and `links`: links keep the request's other parameters. */
export function cursorPageFields(req: ListRequest<PageQueryValues>, pageInfo: CursorPageInfo) {
  const clear = { 'page[after]': undefined, 'page[before]': undefined };
  const link = (key: 'page[after]' | 'page[before]', cursor: string) => linkTo(req.baseUrl, req.url, { ...clear, [key]: cursor });
  return {
    meta: { has_more: isBackward(req.query) ? pageInfo.hasPreviousPage : pageInfo.hasNextPage, after_cursor: pageInfo.endCursor ?? null, before_cursor: pageInfo.startCursor ?? null },
    links: {
      next: pageInfo.hasNextPage && pageInfo.endCursor ? link('page[after]', pageInfo.endCursor) : null,
      prev: pageInfo.hasPreviousPage && pageInfo.startCursor ? link('page[before]', pageInfo.startCursor) : null,
    },
  };
}

/** The offset mode's `next_page`, `previous_page` and `count`: links to the neighbouring pages, keeping the other parameters. */
function offsetPageFields(req: ListRequest<PageQueryValues>, page: { hasNextPage: boolean; hasPreviousPage: boolean }, count: number) {
  const { page: number } = offsetVariables(req.query);
  return {
    next_page: page.hasNextPage ? linkTo(req.baseUrl, req.url, { page: number + 1 }) : null,
    previous_page: page.hasPreviousPage ? linkTo(req.baseUrl, req.url, { page: number - 1 }) : null,
    count,
  };
}

/** A list with both modes: the fields its answer adds beside the records of its connection. */
export function pageFields(req: ListRequest<PageQueryValues>, connection: { pageInfo: CursorPageInfo; totalCount?: number | null }) {
  if (isCursorMode(req.query)) return cursorPageFields(req, connection.pageInfo);
  return offsetPageFields(req, connection.pageInfo, connection.totalCount ?? 0);
}

/** A list with offset pages only: its fields, from the number of its records. */
export function offsetListPage(req: ListRequest<PageQueryValues>, count: number) {
  const { page, perPage } = offsetVariables(req.query);
  return offsetPageFields(req, { hasNextPage: page * Math.min(perPage, 100) < count, hasPreviousPage: page > 1 }, count);
}
