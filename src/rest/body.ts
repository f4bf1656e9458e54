// Request bodies are typed and shaped by the routes' schemas (src/rest/schemas.ts,
// validated in src/rest/validation.ts); what remains here formats answers.

/** A timestamp as GraphQL's DateTimeISO writes it (Date#toISOString): 2026-11-21T10:29:59.123Z */
const ISO_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** ISO 8601 UTC with seconds, as Zendesk writes timestamps: 2026-11-21T10:29:59Z */
export function isoSeconds(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  // what the routes format comes from GraphQL's answers, already ISO in UTC: the milliseconds
  // are cut off rather than the date parsed and written again (~5 % of a list's CPU with 100 rows)
  if (typeof value === 'string' && ISO_MILLISECONDS.test(value)) return `${value.slice(0, 19)}Z`;
  return new Date(value).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
