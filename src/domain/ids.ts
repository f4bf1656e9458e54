/** Ids are positive BIGINTs; anything else names no record (→ not found, never 400/500). */
export function parseId(raw: unknown): bigint | null {
  if (typeof raw === 'bigint') return raw > 0n && raw <= 9223372036854775807n ? raw : null;
  const s = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : raw;
  if (typeof s !== 'string' || !/^[1-9]\d{0,18}$/.test(s)) return null;
  const id = BigInt(s);
  return id <= 9223372036854775807n ? id : null;
}
