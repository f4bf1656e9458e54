import { Type } from 'typebox';
import { RestCreateCallbackRequestDocument } from '../generated/graphql';
import { defineRoute, type AnyRestRoute } from './adapter';
import { answer, BodyField, ERRORS, errorResponses, HEADERS, mustBe, NoContent, PositiveInteger, unwrap, wrappedBody } from './schemas';

const CALLBACK_REQUEST_FIELDS = {
  phone_number_id: BodyField(PositiveInteger, mustBe('Phone number', 'positiveInteger'), 'Required: a voice phone number of the account'),
  requester_phone_number: BodyField(Type.String(), mustBe('Requester phone number', 'string'), 'Required: E.164 (+ and 8–15 digits), valid for its country'),
  group_ids: BodyField(Type.Array(PositiveInteger), mustBe('Group ids', 'positiveIntegers'), 'At most 100 group ids of the account; duplicates dropped'),
};

/** Zendesk's Create Callback Request (docs/api.md, "Voice callback requests"): {"callback_request": {...}} → 201 with an empty body, and the account's budget in headers. */
export const callbackRequestRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'POST',
    paths: ['/channels/voice/callback_requests'],
    document: RestCreateCallbackRequestDocument,
    schema: {
      operationId: 'createCallbackRequest', summary: 'Create a voice callback request', tags: ['Voice callback requests'],
      description: "Agents and admins. 30 successful creations per account per rolling 10 minutes: every 201 and 429 carries the account's budget.",
      body: wrappedBody('callback_request', CALLBACK_REQUEST_FIELDS),
      response: {
        201: NoContent('Queued', HEADERS.rateLimit),
        ...errorResponses({ body: 'fields', extra: { 429: answer(ERRORS[429], 'Throttled: the login throttle, or the account\'s callback budget', { ...HEADERS.retryAfter, ...HEADERS.rateLimit }) } }),
      },
    },
    variables: (req) => {
      const { phone_number_id: phone, requester_phone_number: requester, group_ids: groups } = unwrap(req.body, 'callback_request');
      return { input: { phoneNumberId: phone == null ? phone : String(phone), requesterPhoneNumber: requester, groupIds: groups && groups.map(String) } };
    },
    respond: (data) => {
      const budget = data.createCallbackRequest.rateLimit;
      return {
        status: 201,
        headers: budget ? { 'x-rate-limit': String(budget.limit), 'x-rate-limit-remaining': String(budget.remaining) } : undefined,
      };
    },
  }),
];
