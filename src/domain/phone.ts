import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * The E.164 form of a number written in E.164 ("+" then 8–15 digits) that
 * libphonenumber (full metadata) finds valid for its country; null otherwise.
 */
export function toE164(input: string): string | null {
  const compact = input.trim();
  if (!/^\+[1-9]\d{7,14}$/.test(compact)) return null;
  const parsed = parsePhoneNumberFromString(compact);
  return parsed?.isValid() ? parsed.number : null;
}

/**
 * How a stored E.164 number reads: international format ("+1 415 555 2671") and
 * its country (ISO 3166-1 alpha-2; null for non-geographic numbers).
 */
export function describePhoneNumber(e164: string): { display: string; country: string | null } {
  const parsed = parsePhoneNumberFromString(e164);
  return { display: parsed?.formatInternational() ?? e164, country: parsed?.country ?? null };
}
