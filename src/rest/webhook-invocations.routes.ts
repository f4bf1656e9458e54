import { Type } from 'typebox';
import {
  RestListWebhookInvocationAttemptsDocument,
  RestListWebhookInvocationsDocument,
  RestTestWebhookDocument,
  type RestWebhookInvocationFragment,
  type WebhookInvocationStatus,
} from '../generated/graphql';
import { INVOCATION_STATUSES } from '../domain/webhooks/webhook-invocation.repository';
import { defineRoute, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { cursorPageFields, cursorVariables } from './pagination';
import { answer, errorResponses, IgnoredBody, INVALID, IdParams, Nullable, NullableTimestamp, PageFields, PageQuery, QueryString, StringEnum, Timestamp } from './schemas';

// What a webhook sent (docs/api.md, "Webhook deliveries"), in the shape of Zendesk's
// List Webhook Invocations and List Webhook Invocation Attempts: admins, kept at least 7 days.

const TAGS = ['Webhooks'];
const PATH = '/webhooks/:id/invocations';

const InvocationJson = Type.Object(
  {
    id: Type.String({ description: "The invocation's id: the webhook-id header of its requests" }),
    webhook_id: Type.String(),
    event_id: Type.String({ description: "The event's id (the envelope's id)" }),
    event_type: Type.String({ description: 'zen:event-type:<name>' }),
    status: StringEnum(INVOCATION_STATUSES),
    attempts: Type.Integer({ description: 'Requests made so far' }),
    reason: Nullable(Type.String(), { description: 'Why it failed, when it did' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    latest_completed_at: NullableTimestamp,
  },
  { additionalProperties: false, title: 'WebhookInvocation' },
);

const AttemptJson = Type.Object(
  {
    id: Type.String(),
    invocation_id: Type.String(),
    started_at: Timestamp,
    duration_ms: Type.Integer(),
    status: Nullable(Type.Integer(), { description: "The receiver's HTTP status; null when it gave none" }),
    error: Nullable(Type.String(), { description: 'Why there was no answer' }),
    response: Nullable(Type.String(), { description: "The first KB of the answer's body" }),
  },
  { additionalProperties: false, title: 'WebhookInvocationAttempt' },
);

function serializeInvocation(i: RestWebhookInvocationFragment) {
  return {
    id: i.id, webhook_id: i.webhookId, event_id: i.eventId, event_type: i.eventType, status: i.status.toLowerCase() as (typeof INVOCATION_STATUSES)[number],
    attempts: i.attempts, reason: i.reason, created_at: isoSeconds(i.createdAt)!, updated_at: isoSeconds(i.updatedAt)!, latest_completed_at: isoSeconds(i.completedAt),
  };
}

const ListQuery = Type.Object({
  'filter[status]': Type.Optional(StringEnum(INVOCATION_STATUSES, { description: 'Only the invocations of this status', [INVALID]: `filter[status] must be one of: ${INVOCATION_STATUSES.join(', ')}` })),
  'filter[event_type]': QueryString({ description: 'Only the invocations of this event type, e.g. zen:event-type:oauth_client.created' }),
  'page[size]': PageQuery['page[size]'],
  'page[after]': PageQuery['page[after]'],
  'page[before]': PageQuery['page[before]'],
});

const TestAnswer = Type.Object(
  {
    response: Type.Object(
      {
        status: Nullable(Type.Integer(), { description: "The receiver's HTTP status; null when it gave none" }),
        body: Nullable(Type.String(), { description: "The first KB of the answer's body" }),
        error: Nullable(Type.String(), { description: 'Why there was no answer (connection error, timeout, refused address)' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'WebhookTestResponse' },
);

const AttemptParams = Type.Object({ id: IdParams.properties.id, invocation_id: IdParams.properties.id });

export const webhookInvocationRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [PATH],
    document: RestListWebhookInvocationsDocument,
    schema: {
      operationId: 'listWebhookInvocations', summary: 'List webhook invocations', tags: TAGS,
      description: "The webhook's invocations (one per event sent to it, kept at least 7 days), id ascending, in cursor pages, optionally of one status or event type. Admins.",
      params: IdParams,
      querystring: ListQuery,
      response: {
        200: answer(Type.Object({ invocations: Type.Array(InvocationJson), meta: PageFields.meta, links: PageFields.links }, { additionalProperties: false }), 'A page of invocations'),
        ...errorResponses({ id: true }),
      },
    },
    variables: (req) => {
      const status = req.query['filter[status]'];
      return {
        webhookId: req.params.id, status: status && (status.toUpperCase() as WebhookInvocationStatus), eventType: req.query['filter[event_type]'] || undefined,
        ...cursorVariables(req.query),
      };
    },
    respond: (data, req) => ({
      status: 200,
      body: { invocations: data.webhookInvocations.edges.map((e) => serializeInvocation(e.node)), ...cursorPageFields(req, data.webhookInvocations.pageInfo) },
    }),
  }),
  defineRoute({
    method: 'GET',
    paths: [`${PATH}/:invocation_id/attempts`],
    document: RestListWebhookInvocationAttemptsDocument,
    schema: {
      operationId: 'listWebhookInvocationAttempts', summary: 'List webhook invocation attempts', tags: TAGS,
      description: "An invocation's attempts, oldest first: when, how long, the receiver's status and the first KB of its answer. Admins.",
      params: AttemptParams,
      response: { 200: answer(Type.Object({ attempts: Type.Array(AttemptJson) }, { additionalProperties: false }), "The invocation's attempts"), ...errorResponses({ id: true }) },
    },
    variables: (req) => ({ webhookId: req.params.id, invocationId: req.params.invocation_id }),
    respond: (data) => ({
      status: 200,
      body: {
        attempts: data.webhookInvocationAttempts.map((a) => ({
          id: a.id, invocation_id: a.invocationId, started_at: isoSeconds(a.startedAt)!, duration_ms: a.durationMs, status: a.statusCode ?? null, error: a.error ?? null,
          response: a.response ?? null,
        })),
      },
    }),
  }),
  defineRoute({
    method: 'POST',
    paths: ['/webhooks/:id/test'],
    document: RestTestWebhookDocument,
    schema: {
      operationId: 'testWebhook', summary: 'Test a webhook', tags: TAGS,
      description:
        "Sends a test event (type zen:event-type:webhook.test) to the webhook now, whatever its status, signed and checked by the endpoint guard like a delivery, within 12 s; " +
        "answers the receiver's status and the first KB of its body (status null and an error when it gave no answer). Nothing is recorded. A body is ignored. Admins. 409 when the signing secret cannot be read because HASH_KEY changed: reset it.",
      params: IdParams,
      body: IgnoredBody,
      response: { 200: answer(TestAnswer, "The receiver's answer"), ...errorResponses({ id: true, body: 'ignored', conflict: true }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => ({ status: 200, body: { response: { status: data.testWebhook.status ?? null, body: data.testWebhook.body ?? null, error: data.testWebhook.error ?? null } } }),
  }),
];
