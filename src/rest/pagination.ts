// Query parameters are typed and read by the routes' schemas (src/rest/schemas.ts).

/** The request URL made absolute, with some parameters replaced (others kept). */
export function linkTo(baseUrl: string, requestUrl: string, set: Record<string, string | number | undefined>): string {
  const url = new URL(requestUrl, `${baseUrl}/`);
  const target = new URL(url.pathname + url.search, baseUrl);
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) target.searchParams.delete(k);
    else target.searchParams.set(k, String(v));
  }
  return target.toString();
}

export interface CursorPageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor?: string | null;
  endCursor?: string | null;
}

/**
 * The cursor mode's `meta` and `links` (API.md "Pagination"), for a page read
 * forward (page[after]) or backward (page[before]): links keep the request's
 * other parameters.
 */
export function cursorPageFields(pageInfo: CursorPageInfo, backward: boolean, baseUrl: string, requestUrl: string) {
  const clear = { 'page[after]': undefined, 'page[before]': undefined };
  return {
    meta: { has_more: backward ? pageInfo.hasPreviousPage : pageInfo.hasNextPage, after_cursor: pageInfo.endCursor ?? null, before_cursor: pageInfo.startCursor ?? null },
    links: {
      next: pageInfo.hasNextPage && pageInfo.endCursor ? linkTo(baseUrl, requestUrl, { ...clear, 'page[after]': pageInfo.endCursor }) : null,
      prev: pageInfo.hasPreviousPage && pageInfo.startCursor ? linkTo(baseUrl, requestUrl, { ...clear, 'page[before]': pageInfo.startCursor }) : null,
    },
  };
}

/**
 * The offset mode's `next_page`, `previous_page` and `count` (API.md "Pagination"):
 * links to the neighbouring pages that keep the request's other parameters.
 */
export function offsetPageFields(page: { page: number; hasNextPage: boolean; hasPreviousPage: boolean }, count: number, baseUrl: string, requestUrl: string) {
  return {
    next_page: page.hasNextPage ? linkTo(baseUrl, requestUrl, { page: page.page + 1 }) : null,
    previous_page: page.hasPreviousPage ? linkTo(baseUrl, requestUrl, { page: page.page - 1 }) : null,
    count,
  };
}

/** The variables of a list that has offset pages only (page 1.., per_page 1..100, larger values clamped). */
export function offsetListVariables(query: { page?: number; per_page?: number }) {
  return { page: query.page ?? 1, perPage: query.per_page ?? 100 };
}

/** `next_page`, `previous_page` and `count` of such a list, from its query and the number of its records. */
export function offsetListPage(query: { page?: number; per_page?: number }, count: number, baseUrl: string, requestUrl: string) {
  const { page, perPage } = offsetListVariables(query);
  return offsetPageFields({ page, hasNextPage: page * Math.min(perPage, 100) < count, hasPreviousPage: page > 1 }, count, baseUrl, requestUrl);
}
