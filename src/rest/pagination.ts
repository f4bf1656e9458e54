import type { RestRequest } from './adapter';
import { cursorPageFields, intParam, linkTo, queryParam, type CursorPageInfo } from './query';

// Zendesk's two pagination shapes (API.md "Pagination"), shared by the list
// routes: the query parameters become the connection's variables, and the page
// becomes `meta`/`links` (cursor) or `next_page`/`previous_page`/`count` (offset).

const CURSOR_PARAMS = ['page[size]', 'page[after]', 'page[before]'];

export type PageVariables =
  | { first?: number; after?: string; withCount: false }
  | { last?: number; before: string; withCount: false }
  | { page: number; perPage: number; withCount: true };

/** Cursor mode when any page[…] parameter is present, offset mode otherwise; a bad number is 400. */
export function pageVariables(req: RestRequest): PageVariables {
  if (CURSOR_PARAMS.some((p) => req.query[p] !== undefined)) {
    const size = intParam(req.query, 'page[size]');
    const after = queryParam(req.query, 'page[after]') || undefined;
    const before = queryParam(req.query, 'page[before]') || undefined;
    return before ? { last: size, before, withCount: false } : { first: size, after, withCount: false };
  }
  return offsetVariables(req);
}

/** Offset mode only (page 1.., per_page 1..100 clamped). */
export function offsetVariables(req: RestRequest): { page: number; perPage: number; withCount: true } {
  return { page: intParam(req.query, 'page') ?? 1, perPage: intParam(req.query, 'per_page') ?? 100, withCount: true };
}

/** The pagination fields of a list answer, for the variables it was asked with. */
export function pageFields(vars: PageVariables, pageInfo: CursorPageInfo, totalCount: number | null | undefined, req: RestRequest): Record<string, unknown> {
  if (!vars.withCount) return cursorPageFields(pageInfo, 'before' in vars, req.baseUrl, req.url);
  return offsetFields(vars, totalCount ?? 0, req);
}

/** next_page / previous_page / count of an offset page. */
export function offsetFields(vars: { page: number; perPage: number }, count: number, req: RestRequest): Record<string, unknown> {
  const perPage = Math.min(vars.perPage, 100);
  return {
    next_page: vars.page * perPage < count ? linkTo(req.baseUrl, req.url, { page: vars.page + 1 }) : null,
    previous_page: vars.page > 1 ? linkTo(req.baseUrl, req.url, { page: vars.page - 1 }) : null,
    count,
  };
}
