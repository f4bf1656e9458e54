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
