import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { Type } from 'typebox';
import {
  RestAcceptCallbackRequestDocument,
  RestCancelCallbackRequestDocument,
  RestCreateCallbackRequestDocument,
  RestDeclineCallbackRequestDocument,
  RestListCallbackRequestsDocument,
  RestReportCallbackOutcomeDocument,
  RestShowCallbackRequestDocument,
  type CallbackOutcome,
  type CallbackRequestStatus,
  type RestCallbackRequestFragment,
} from '../generated/graphql';
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { cursorPageFields } from './pagination';
import { showRoute } from './record-routes';
import {
  answer, BodyField, ERRORS, errorResponses, HEADERS, IdParams, IgnoredBody, INVALID, Keyed, mustBe, NoContent, Nullable, NullableTimestamp, PageFields,
  PageQuery, PositiveInteger, QueryString, required, StringEnum, Timestamp, unwrap, wrappedBody,
} from './schemas';

const PATH = '/channels/voice/callback_requests';
const TAGS = ['Voice callback requests'];
const STATUSES = ['queued', 'offered', 'accepted', 'dialing', 'completed', 'failed', 'cancelled'] as const;
const OUTCOMES = ['answered', 'no_answer', 'busy', 'failed'] as const;

const CALLBACK_REQUEST_FIELDS = {
  phone_number_id: BodyField(PositiveInteger, mustBe('Phone number', 'positiveInteger'), 'Required: a voice phone number of the account'),
  requester_phone_number: BodyField(Type.String(), mustBe('Requester phone number', 'string'), 'Required: E.164 (+ and 8–15 digits), valid for its country'),
  group_ids: BodyField(Type.Array(PositiveInteger), mustBe('Group ids', 'positiveIntegers'), 'At most 100 group ids of the account; duplicates dropped'),
};

/** A callback request as list and show give it (docs/api.md, "The callback lifecycle"). */
const CallbackRequestJson = Type.Object(
  {
    id: Type.Integer(),
    status: StringEnum(STATUSES),
    phone_number_id: Type.Integer(),
    requester_phone_number: Type.String({ description: 'E.164' }),
    group_ids: Type.Array(Type.Integer(), { description: 'The groups it asked for' }),
    agent_id: Nullable(Type.Integer(), { description: 'The agent offered it, dialing it, or who completed it' }),
    attempts: Type.Integer({ minimum: 0, description: 'Dial attempts made' }),
    queue_position: Nullable(Type.Integer({ minimum: 1 }), { description: "1 = next in its phone number's queue; null unless queued" }),
    estimated_wait_time: Nullable(Type.Integer({ minimum: 0 }), { description: 'Seconds, from recent handling times; null when unknown or not queued' }),
    created_at: Timestamp,
    updated_at: NullableTimestamp,
    completed_at: NullableTimestamp,
    history: Type.Array(
      Type.Object({ status: StringEnum(STATUSES), agent_id: Nullable(Type.Integer()), at: Timestamp }, { additionalProperties: false }),
      { description: 'Every status it went through, oldest first' },
    ),
  },
  {
    additionalProperties: false,
    title: 'CallbackRequest',
    examples: [{
      id: 7, status: 'queued', phone_number_id: 1, requester_phone_number: '+14155552671', group_ids: [1], agent_id: null, attempts: 0, queue_position: 1,
      estimated_wait_time: 95, created_at: '2026-11-21T10:29:59Z', updated_at: null, completed_at: null, history: [],
    }],
  },
);
const OneCallbackRequest = Keyed('callback_request', CallbackRequestJson);

const status = (s: CallbackRequestStatus) => s.toLowerCase() as (typeof STATUSES)[number];

function serializeCallbackRequest(r: RestCallbackRequestFragment) {
  return {
    id: Number(r.id), status: status(r.status), phone_number_id: Number(r.phoneNumberId), requester_phone_number: r.requesterPhoneNumber,
    group_ids: r.requestedGroupIds.map(Number), agent_id: r.agentId === null ? null : Number(r.agentId), attempts: r.attempts,
    queue_position: r.queuePosition, estimated_wait_time: r.estimatedWaitTime, created_at: isoSeconds(r.createdAt)!, updated_at: isoSeconds(r.updatedAt),
    completed_at: isoSeconds(r.completedAt),
    history: r.history.map((h) => ({ status: status(h.status), agent_id: h.agentId === null ? null : Number(h.agentId), at: isoSeconds(h.at)! })),
  };
}

const ListQuery = Type.Object({
  status: Type.Optional(StringEnum(STATUSES, { description: 'Only the requests in this status', [INVALID]: `status must be one of: ${STATUSES.join(', ')}` })),
  agent_id: QueryString({ description: 'Only the requests offered to, dialing for, or completed by this agent', pattern: '^[0-9]+$', invalid: 'agent_id must be a positive integer' }),
  phone_number_id: QueryString({ description: 'Only the requests of this voice phone number', pattern: '^[0-9]+$', invalid: 'phone_number_id must be a positive integer' }),
  'page[size]': PageQuery['page[size]'],
  'page[after]': PageQuery['page[after]'],
});

/** An action on one request: POST …/{id}/<action>, answered with the request as it is now. */
function actionRoute<TData>(
  action: 'accept' | 'decline', document: TypedDocumentNode<TData, { id: string }>, pick: (data: TData) => RestCallbackRequestFragment,
  words: { summary: string; description: string },
): AnyRestRoute {
  return defineRoute({
    method: 'POST',
    paths: [`${PATH}/:id/${action}`],
    document,
    schema: {
      operationId: `${action}CallbackRequest`, summary: words.summary, tags: TAGS, description: words.description, params: IdParams, body: IgnoredBody,
      response: { 200: answer(OneCallbackRequest, 'The request, as it is now'), ...errorResponses({ id: true, body: 'ignored', conflict: true }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => ({ status: 200, body: { callback_request: serializeCallbackRequest(pick(data)) } }),
  });
}

/** Zendesk's Create Callback Request, and the lifecycle (docs/api.md, "Voice callback requests", "The callback lifecycle"). */
export const callbackRequestRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'POST',
    paths: [PATH],
    document: RestCreateCallbackRequestDocument,
    schema: {
      operationId: 'createCallbackRequest', summary: 'Create a voice callback request', tags: TAGS,
      description: "Agents and admins. 30 successful creations per account per rolling 10 minutes: every 201 and 429 carries the account's budget. A free online agent gets the offer at once.",
      body: wrappedBody('callback_request', CALLBACK_REQUEST_FIELDS),
      response: {
        201: NoContent('Queued (an empty body, as the seed says); Location names the new request', { ...HEADERS.rateLimit, ...HEADERS.location }),
        ...errorResponses({ body: 'fields', extra: { 429: answer(ERRORS[429], 'Throttled: the login throttle, or the account\'s callback budget', { ...HEADERS.retryAfter, ...HEADERS.rateLimit }) } }),
      },
    },
    variables: (req) => {
      const { phone_number_id: phone, requester_phone_number: requester, group_ids: groups } = unwrap(req.body, 'callback_request');
      return { input: { phoneNumberId: phone == null ? phone : String(phone), requesterPhoneNumber: requester, groupIds: groups && groups.map(String) } };
    },
    respond: (data, req) => {
      const created = data.createCallbackRequest;
      const budget = created.rateLimit;
      return {
        status: 201,
        headers: {
          location: `${req.baseUrl}/api/v2${PATH}/${created.id}.json`,
          ...(budget ? { 'x-rate-limit': String(budget.limit), 'x-rate-limit-remaining': String(budget.remaining) } : {}),
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    paths: [PATH],
    document: RestListCallbackRequestsDocument,
    schema: {
      operationId: 'listCallbackRequests', summary: 'List callback requests', tags: TAGS,
      description: "The account's callback requests, id ascending (queue order), with their history, in cursor pages (page[size] 1..100, page[after]); filters status, agent_id, phone_number_id. Agents and admins.",
      querystring: ListQuery,
      response: {
        200: answer(Type.Object({ callback_requests: Type.Array(CallbackRequestJson), meta: PageFields.meta, links: PageFields.links }, { additionalProperties: false }), 'A page of callback requests'),
        ...errorResponses(),
      },
    },
    variables: (req) => {
      const q = req.query;
      return {
        status: q.status && (q.status.toUpperCase() as CallbackRequestStatus), agentId: q.agent_id || undefined, phoneNumberId: q.phone_number_id || undefined,
        first: Math.min(q['page[size]'] ?? 100, 100), after: q['page[after]'] || undefined,
      };
    },
    respond: (data, req) => ({
      status: 200,
      // forward only (no page[before]): a prev link would name a parameter this list ignores, and lead back to the first page
      body: {
        callback_requests: data.callbackRequests.edges.map((e) => serializeCallbackRequest(e.node)),
        ...cursorPageFields(req, { ...data.callbackRequests.pageInfo, hasPreviousPage: false }),
      },
    }),
  }),
  showRoute({
    path: `${PATH}/:id`,
    document: RestShowCallbackRequestDocument,
    schema: { operationId: 'showCallbackRequest', summary: 'Show a callback request', tags: TAGS, description: 'With its history, queue position and estimated wait. Agents and admins.' },
    answer: { schema: OneCallbackRequest, description: 'The request' },
    body: (data) => data.callbackRequest && { callback_request: serializeCallbackRequest(data.callbackRequest) },
  }),
  actionRoute('accept', RestAcceptCallbackRequestDocument, (d) => d.acceptCallbackRequest, {
    summary: 'Accept an offered callback request',
    description: 'The offered agent only (another agent: 409): the request becomes dialing, the agent on_call, and callback_request.dialing tells the telephony integration whom to call.',
  }),
  actionRoute('decline', RestDeclineCallbackRequestDocument, (d) => d.declineCallbackRequest, {
    summary: 'Decline an offered callback request',
    description: 'The offered agent only (another agent: 409): the request goes back to the queue and to the next eligible agent.',
  }),
  defineRoute({
    method: 'POST',
    paths: [`${PATH}/:id/outcome`],
    document: RestReportCallbackOutcomeDocument,
    schema: {
      operationId: 'reportCallbackOutcome', summary: "Report a dial's outcome", tags: TAGS,
      description: 'The dialing agent, an admin, or an integration\'s token with write: answered → completed; no_answer and busy → queued again after callback_retry_delay, failed once callback_max_attempts are used; failed → failed. 409 unless dialing.',
      params: IdParams,
      // a missing outcome is a 422 BlankValue (required()), not a 400 for a body that is no object
      body: wrappedBody('callback_request', {
        outcome: BodyField(StringEnum(OUTCOMES), `Outcome: must be one of ${OUTCOMES.join(', ')}`, 'Required: answered, no_answer, busy or failed'),
      }, '{"outcome": "answered"}.'),
      response: { 200: answer(OneCallbackRequest, 'The request, as it is now'), ...errorResponses({ id: true, body: 'fields', conflict: true }) },
    },
    variables: (req) => ({ id: req.params.id, outcome: required(unwrap(req.body, 'callback_request').outcome, 'outcome', 'Outcome').toUpperCase() as CallbackOutcome }),
    respond: (data) => ({ status: 200, body: { callback_request: serializeCallbackRequest(data.reportCallbackOutcome) } }),
  }),
  defineRoute({
    method: 'DELETE',
    paths: [`${PATH}/:id`],
    document: RestCancelCallbackRequestDocument,
    schema: {
      operationId: 'cancelCallbackRequest', summary: 'Cancel a callback request', tags: TAGS,
      description: 'Admins, or the agent who created it (another agent: 403), while it has not ended (completed, failed or cancelled: 409). Its agent loses the offer or ends the call.',
      params: IdParams, body: IgnoredBody,
      response: { 204: NoContent('Cancelled'), ...errorResponses({ id: true, body: 'ignored', conflict: true }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: () => ({ status: 204 }),
  }),
];
