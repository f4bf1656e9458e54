import { Validator } from '../errors';
import { textField } from '../directory/acting';
import { EVENT_NAMES, eventNameOf, eventType } from '../events/event-types';
import { checkEndpoint, ENDPOINT_MAX_LENGTH, type EndpointPolicy } from './endpoint-guard';

// The fields of a webhook (docs/api.md, "Webhooks"), as Zendesk names and allows them.

/** Zendesk's methods; a webhook subscribed to events must use POST (as in Zendesk). */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Zendesk also knows xml and form_encoded, for trigger webhooks; events are JSON. */
export const REQUEST_FORMATS = ['json'] as const;
export const STATUSES = ['active', 'inactive'] as const;
const WEBHOOK_NAME_MAX = 255;
const WEBHOOK_DESCRIPTION_MAX = 1000;
/** Webhooks per account (Zendesk's own limit is of the same order). */
export const MAX_WEBHOOKS_PER_ACCOUNT = 50;

export type HttpMethod = (typeof HTTP_METHODS)[number];
export type RequestFormat = (typeof REQUEST_FORMATS)[number];
export type WebhookStatus = (typeof STATUSES)[number];

/** What a request gives: each field absent (undefined), null, or a value of any type. */
export interface WebhookInput {
  name?: unknown;
  description?: unknown;
  endpoint?: unknown;
  httpMethod?: unknown;
  requestFormat?: unknown;
  status?: unknown;
  subscriptions?: unknown;
}

/** Valid values of the fields given (all of them on create and replace). */
export interface WebhookFields {
  name?: string;
  description?: string | null;
  endpoint?: string;
  httpMethod?: HttpMethod;
  requestFormat?: RequestFormat;
  status?: WebhookStatus;
  subscriptions?: string[];
}

/** create and replace (PUT) set every field (omitted optional ones are cleared); patch sets the given ones. */
export type WriteMode = 'create' | 'replace' | 'patch';

function oneOf<T extends string>(v: Validator, field: string, label: string, raw: unknown, values: readonly T[], required: boolean): T | undefined {
  if (raw === undefined || raw === null) {
    if (required || raw === null) v.add(field, 'BlankValue', `${label}: cannot be blank`);
    return undefined;
  }
  if (typeof raw === 'string' && (values as readonly string[]).includes(raw)) return raw as T;
  v.add(field, 'InvalidValue', `${label}: must be one of ${values.join(', ')}`);
  return undefined;
}

function subscriptionsField(v: Validator, raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  if (raw === null) return [];
  if (!Array.isArray(raw) || raw.some((s) => typeof s !== 'string')) {
    v.add('subscriptions', 'InvalidValue', 'Subscriptions: must be an array of strings');
    return undefined;
  }
  const unknown = (raw as string[]).filter((s) => eventNameOf(s) === undefined);
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 5).map((s) => JSON.stringify(s.slice(0, 100))).join(', ');
    v.add('subscriptions', 'InvalidValue', `Subscriptions: unknown event type ${shown}; known: ${EVENT_NAMES.map(eventType).join(', ')}`);
    return undefined;
  }
  return [...new Set(raw as string[])];
}

/**
 * Checks the fields of a request, the endpoint guard included (which may resolve
 * the endpoint's host), and returns their valid values, or throws every problem at
 * once (422).
 */
export async function validateWebhook(input: WebhookInput, mode: WriteMode, policy: EndpointPolicy): Promise<WebhookFields> {
  const v = new Validator();
  const required = mode !== 'patch';
  const name = textField(v, 'name', 'Name', input.name, { required: required || input.name !== undefined, max: WEBHOOK_NAME_MAX });
  const description = textField(v, 'description', 'Description', input.description, { required: false, nullable: true, max: WEBHOOK_DESCRIPTION_MAX });
  const endpoint = textField(v, 'endpoint', 'Endpoint', input.endpoint, { required: required || input.endpoint !== undefined, max: ENDPOINT_MAX_LENGTH });
  const fields: WebhookFields = {
    name: name ?? undefined,
    description: description === undefined && mode !== 'patch' ? null : description,
    httpMethod: oneOf(v, 'http_method', 'HTTP method', input.httpMethod, HTTP_METHODS, required),
    requestFormat: oneOf(v, 'request_format', 'Request format', input.requestFormat, REQUEST_FORMATS, required),
    status: oneOf(v, 'status', 'Status', input.status, STATUSES, required),
    subscriptions: subscriptionsField(v, input.subscriptions) ?? (mode === 'patch' ? undefined : []),
  };
  if (typeof endpoint === 'string') {
    const checked = await checkEndpoint(endpoint, policy);
    if (checked.ok) fields.endpoint = checked.url;
    else v.add('endpoint', 'InvalidValue', `Endpoint: ${checked.problem}`);
  }
  v.throwIfAny();
  return fields;
}

/** The rule across fields, on the webhook as it will be: events are sent with POST (Zendesk's rule). */
export function checkCombination(webhook: { httpMethod: string; subscriptions: readonly string[] }): void {
  if (webhook.subscriptions.length > 0 && webhook.httpMethod !== 'POST') {
    const v = new Validator();
    v.add('http_method', 'InvalidValue', 'HTTP method: must be POST for a webhook subscribed to events');
    v.throwIfAny();
  }
}
