import type { Validator } from '../errors';
import { parseId } from '../ids';
import { toE164 } from '../phone';

export interface CallbackRequestInput {
  phoneNumberId?: unknown;
  requesterPhoneNumber?: unknown;
  groupIds?: unknown;
}

/** What passed the shape checks; a field that failed is absent. */
export interface CheckedCallbackRequest {
  phoneNumberId?: bigint;
  requesterPhoneNumber?: string;
  groupIds?: bigint[];
}

const MAX_GROUPS = 100;

/** Shows at most 50 characters of what the caller sent, so a huge value cannot flood the response. */
function shown(value: unknown): string {
  const s = String(value);
  return s.length > 50 ? `${s.slice(0, 50)}…` : s;
}

/**
 * Shape rules of docs/api.md, "Voice callback requests". Problems go to `v`; the service adds
 * the ones that need the database (ids of this account) before throwing.
 */
export function checkCallbackRequest(input: CallbackRequestInput, v: Validator): CheckedCallbackRequest {
  const out: CheckedCallbackRequest = {};

  const phone = input.phoneNumberId;
  if (phone === undefined || phone === null || phone === '') v.add('phone_number_id', 'BlankValue', 'Phone number: cannot be blank');
  else {
    // An id that is not a positive integer names no phone number.
    const id = parseId(phone);
    if (id === null) v.add('phone_number_id', 'NotFound', `Phone number: ${shown(phone)} not found`);
    else out.phoneNumberId = id;
  }

  const requester = input.requesterPhoneNumber;
  if (requester === undefined || requester === null || (typeof requester === 'string' && !requester.trim())) {
    v.add('requester_phone_number', 'BlankValue', 'Requester phone number: cannot be blank');
  } else {
    const e164 = typeof requester === 'string' ? toE164(requester) : null;
    if (e164) out.requesterPhoneNumber = e164;
    else v.add('requester_phone_number', 'InvalidValue', `Requester phone number: ${shown(requester)} is not a valid E.164 phone number`);
  }

  const groups = input.groupIds;
  if (groups === undefined || groups === null) out.groupIds = [];
  else if (!Array.isArray(groups)) v.add('group_ids', 'InvalidValue', 'Group ids: must be an array of group ids');
  else if (groups.length > MAX_GROUPS) v.add('group_ids', 'TooLong', `Group ids: at most ${MAX_GROUPS} are allowed`);
  else {
    const ids: bigint[] = [];
    for (const raw of groups) {
      const id = parseId(raw);
      if (id === null) v.add('group_ids', 'NotFound', `Group: ${shown(raw)} not found`);
      else if (!ids.includes(id)) ids.push(id); // order kept: with omnichannel routing the first one wins
    }
    if (!v.has('group_ids')) out.groupIds = ids;
  }
  return out;
}
