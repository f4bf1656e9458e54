import { BadRequestError } from '../domain/errors';

/** A query parameter as one string (the first, if repeated). */
export function queryParam(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' ? s : undefined;
}

/** An integer query parameter, or 400 when present but not an integer. */
export function intParam(query: Record<string, unknown>, name: string): number | undefined {
  const s = queryParam(query, name);
  if (s === undefined || s === '') return undefined;
  if (!/^-?\d{1,9}$/.test(s)) throw new BadRequestError(`${name} must be an integer`);
  return Number(s);
}

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
