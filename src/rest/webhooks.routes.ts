import { Type } from 'typebox';
import {
  RestCreateWebhookDocument,
  RestDeleteWebhookDocument,
  RestListWebhooksDocument,
  RestResetWebhookSigningSecretDocument,
  RestShowWebhookDocument,
  RestShowWebhookSigningSecretDocument,
  RestUpdateWebhookDocument,
  type RestWebhookFragment,
  type WebhookRequestFormat,
  type WebhookStatus,
} from '../generated/graphql';
import { HTTP_METHODS, REQUEST_FORMATS, STATUSES } from '../domain/webhooks/webhook.validation';
import { defineRoute, SHOWS_SECRET, type AnyRestRoute } from './adapter';
import { isoSeconds } from './body';
import { cursorPageFields, cursorVariables } from './pagination';
import { createRoute, deleteRoute, showRoute } from './record-routes';
import {
  answer, BodyField, errorResponses, HEADERS, IdParams, IgnoredBody, INVALID, Keyed, mustBe, NoContent, Nullable, NullableTimestamp, PageFields, PageQuery, QueryString, StringEnum, Timestamp, unwrap,
  wrappedBody, type Fields,
} from './schemas';

// Zendesk's Webhooks API (docs/api.md, "Webhooks"). Ids are strings in Zendesk's JSON
// (of digits here); PUT and PATCH answer 204, as Zendesk's do; the signing secret is
// read and reset at its own path, never shown with the webhook.

const EXAMPLE = {
  id: '7', name: 'Token revocations', description: null, endpoint: 'https://hooks.example.com/zendesk', http_method: 'POST', request_format: 'json',
  status: 'active', subscriptions: ['zen:event-type:oauth_token.revoked'], created_at: '2026-11-21T10:29:59Z', created_by: '3', updated_at: null, updated_by: null,
};

/** Zendesk's webhook JSON. */
const WebhookJson = Type.Object(
  {
    id: Type.String({ description: "The webhook's id (a string, as Zendesk's)" }),
    name: Type.String(),
    description: Nullable(Type.String()),
    endpoint: Type.String({ format: 'uri' }),
    http_method: StringEnum(HTTP_METHODS),
    request_format: StringEnum(REQUEST_FORMATS),
    status: StringEnum(STATUSES),
    subscriptions: Type.Array(Type.String(), { description: 'Event types, zen:event-type:<name>' }),
    created_at: Timestamp,
    created_by: Nullable(Type.String(), { description: 'The id of the user who created it' }),
    updated_at: NullableTimestamp,
    updated_by: Nullable(Type.String(), { description: 'The id of the user who last changed it' }),
  },
  { additionalProperties: false, title: 'Webhook', examples: [EXAMPLE] },
);
const OneWebhook = Keyed('webhook', WebhookJson);

function serializeWebhook(w: RestWebhookFragment) {
  return {
    id: w.id, name: w.name, description: w.description, endpoint: w.endpoint, http_method: w.httpMethod, request_format: w.requestFormat.toLowerCase() as 'json',
    status: w.status.toLowerCase() as (typeof STATUSES)[number], subscriptions: w.subscriptions, created_at: isoSeconds(w.createdAt)!, created_by: w.createdById,
    updated_at: isoSeconds(w.updatedAt), updated_by: w.updatedById,
  };
}

const oneOf = (label: string, values: readonly string[]) => `${label}: must be one of ${values.join(', ')}`;
/** {"webhook": {...}} (or flat) */
const FIELDS = {
  name: BodyField(Type.String(), mustBe('Name', 'string'), 'Required: 1..255 characters after trimming'),
  description: BodyField(Type.String(), mustBe('Description', 'string'), 'At most 1000 characters; null or "" for none'),
  endpoint: BodyField(Type.String(), mustBe('Endpoint', 'string'), 'Required: an absolute http(s) URL without credentials; in production https to a public address'),
  http_method: BodyField(StringEnum(HTTP_METHODS), oneOf('HTTP method', HTTP_METHODS), 'Required: POST to receive events'),
  request_format: BodyField(StringEnum(REQUEST_FORMATS), oneOf('Request format', REQUEST_FORMATS), 'Required: json'),
  status: BodyField(StringEnum(STATUSES), oneOf('Status', STATUSES), 'Required: active or inactive'),
  subscriptions: BodyField(Type.Array(Type.String()), mustBe('Subscriptions', 'stringArray'), 'Event types, e.g. zen:event-type:oauth_client.created'),
};
const WebhookBody = wrappedBody('webhook', FIELDS);

/** The GraphQL input of a body: its known fields (an absent one is undefined, which the executor leaves out). */
const webhookInput = (f: Fields<typeof FIELDS>) => ({
  name: f.name, description: f.description, endpoint: f.endpoint, httpMethod: f.http_method,
  requestFormat: f.request_format && (f.request_format.toUpperCase() as WebhookRequestFormat),
  status: f.status && (f.status.toUpperCase() as WebhookStatus),
  subscriptions: f.subscriptions,
});

const TAGS = ['Webhooks'];
const PATH = '/webhooks';

const SigningSecretJson = Keyed('signing_secret', Type.Object(
  { algorithm: Type.Literal('SHA256'), secret: Type.String({ description: 'The secret, in full' }) },
  { additionalProperties: false, title: 'WebhookSigningSecret' },
));
const secretBody = (s: { algorithm: string; secret: string }) => ({ signing_secret: { algorithm: 'SHA256' as const, secret: s.secret } });

const ListQuery = Type.Object({
  'filter[status]': Type.Optional(StringEnum(STATUSES, { description: 'Only the webhooks of this status', [INVALID]: `filter[status] must be one of: ${STATUSES.join(', ')}` })),
  'filter[name_contains]': QueryString({ description: 'Only the webhooks whose name contains this text (case-insensitive)' }),
  'page[size]': PageQuery['page[size]'],
  'page[after]': PageQuery['page[after]'],
  'page[before]': PageQuery['page[before]'],
});

const update = (method: 'PUT' | 'PATCH') =>
  defineRoute({
    method,
    paths: [`${PATH}/:id`],
    document: RestUpdateWebhookDocument,
    schema: {
      operationId: method === 'PUT' ? 'updateWebhook' : 'patchWebhook', summary: method === 'PUT' ? 'Update a webhook' : 'Patch a webhook', tags: TAGS,
      description: method === 'PUT'
        ? 'Replaces the webhook: the required fields must all be given; an omitted description or subscriptions is cleared. 204, as Zendesk answers. Admins.'
        : 'Changes the given fields (JSON merge patch: null clears description or subscriptions); Content-Type application/json or application/merge-patch+json. 204. Admins.',
      params: IdParams,
      body: WebhookBody,
      response: { 204: NoContent(method === 'PUT' ? 'Replaced' : 'Changed'), ...errorResponses({ id: true, body: 'fields' }) },
    },
    variables: (req) => ({ id: req.params.id, input: webhookInput(unwrap(req.body, 'webhook')), replace: method === 'PUT' }),
    respond: () => ({ status: 204 }),
  });

const SECRET_PATH = `${PATH}/:id/signing_secret`;
const SecretAnswer = answer(SigningSecretJson, 'The signing secret', HEADERS.noStore);
const secretSchema = { tags: TAGS, params: IdParams };

const secretRoutes = [
  defineRoute({
    method: 'GET',
    paths: [SECRET_PATH],
    document: RestShowWebhookSigningSecretDocument,
    schema: {
      ...secretSchema, operationId: 'showWebhookSigningSecret', summary: "Show a webhook's signing secret",
      description: 'The secret in full. Admins. 409 when it cannot be read because HASH_KEY changed since it was made: reset it.',
      response: { 200: SecretAnswer, ...errorResponses({ id: true, conflict: true }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => ({ status: 200, body: secretBody(data.webhookSigningSecret), headers: { ...SHOWS_SECRET } }),
  }),
  defineRoute({
    method: 'POST',
    paths: [SECRET_PATH],
    document: RestResetWebhookSigningSecretDocument,
    schema: {
      ...secretSchema, operationId: 'resetWebhookSigningSecret', summary: "Reset a webhook's signing secret",
      description: 'A new secret (201, as Zendesk answers); the previous one stops signing at once. Admins.',
      body: IgnoredBody,
      response: { 201: SecretAnswer, ...errorResponses({ id: true, body: 'ignored' }) },
    },
    variables: (req) => ({ id: req.params.id }),
    respond: (data) => ({ status: 201, body: secretBody(data.resetWebhookSigningSecret), headers: { ...SHOWS_SECRET } }),
  }),
];

export const webhookRoutes: AnyRestRoute[] = [
  defineRoute({
    method: 'GET',
    paths: [PATH],
    document: RestListWebhooksDocument,
    schema: {
      operationId: 'listWebhooks', summary: 'List webhooks', tags: TAGS,
      description: "The account's webhooks, id ascending, in cursor pages (page[size], page[after], page[before]), optionally of one status or with a name containing a text. Admins.",
      querystring: ListQuery,
      response: {
        200: answer(Type.Object({ webhooks: Type.Array(WebhookJson), meta: PageFields.meta, links: PageFields.links }, { additionalProperties: false }), 'A page of webhooks, with meta and links'),
        ...errorResponses(),
      },
    },
    variables: (req) => {
      const status = req.query['filter[status]'];
      return { status: status && (status.toUpperCase() as WebhookStatus), nameContains: req.query['filter[name_contains]'] || undefined, ...cursorVariables(req.query) };
    },
    respond: (data, req) => ({
      status: 200,
      body: { webhooks: data.webhooks.edges.map((e) => serializeWebhook(e.node)), ...cursorPageFields(req, data.webhooks.pageInfo) },
    }),
  }),
  showRoute({
    path: `${PATH}/:id`,
    document: RestShowWebhookDocument,
    schema: { operationId: 'showWebhook', summary: 'Show a webhook', tags: TAGS, description: 'Admins.' },
    answer: { schema: OneWebhook, description: 'The webhook' },
    body: (data) => data.webhook && { webhook: serializeWebhook(data.webhook) },
  }),
  createRoute({
    path: PATH,
    document: RestCreateWebhookDocument,
    schema: {
      operationId: 'createWebhook', summary: 'Create a webhook', tags: TAGS, body: WebhookBody,
      description: 'At most 50 per account. The endpoint is checked by the endpoint guard. A signing secret is made for it (read it at …/signing_secret). Admins.',
    },
    answer: { schema: OneWebhook, description: 'The webhook' },
    variables: (req) => ({ input: webhookInput(unwrap(req.body, 'webhook')) }),
    created: (data) => data.createWebhook,
    body: (data) => ({ webhook: serializeWebhook(data.createWebhook) }),
  }),
  update('PUT'),
  update('PATCH'),
  deleteRoute({
    path: `${PATH}/:id`,
    document: RestDeleteWebhookDocument,
    schema: { operationId: 'deleteWebhook', summary: 'Delete a webhook', tags: TAGS, description: 'Admins.' },
    done: 'Deleted',
  }),
  ...secretRoutes,
];
