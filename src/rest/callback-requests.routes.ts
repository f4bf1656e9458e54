import { RestCreateCallbackRequestDocument } from '../generated/graphql';
import { defineRoute, type AnyRestRoute } from './adapter';
import { pickFields, unwrap } from './body';

const CALLBACK_REQUEST_FIELDS = {
  phone_number_id: { kind: 'integer', label: 'Phone number', to: 'phoneNumberId' },
  requester_phone_number: { kind: 'string', label: 'Requester phone number', to: 'requesterPhoneNumber' },
  group_ids: { kind: 'integers', label: 'Group ids', to: 'groupIds' },
} as const;

/** Seed §4.4: {"callback_request": {...}} → 201 with an empty body, and the account's budget in headers. */
export const callbackRequestRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'POST',
    paths: ['/channels/voice/callback_requests'],
    document: RestCreateCallbackRequestDocument,
    variables: (req) => ({ input: pickFields(unwrap(req.body, 'callback_request'), CALLBACK_REQUEST_FIELDS) }),
    respond: (data) => {
      const budget = data.createCallbackRequest.rateLimit;
      return {
        status: 201,
        headers: budget ? { 'x-rate-limit': String(budget.limit), 'x-rate-limit-remaining': String(budget.remaining) } : undefined,
      };
    },
  }),
];
