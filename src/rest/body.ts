// Request bodies are typed and shaped by the routes' schemas (src/rest/schemas.ts,
// validated in src/rest/validation.ts); what remains here formats answers.

/** ISO 8601 UTC with seconds, as Zendesk writes timestamps: 2026-11-21T10:29:59Z */
export function isoSeconds(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
