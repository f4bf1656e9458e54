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
