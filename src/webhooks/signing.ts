import { createHmac } from 'node:crypto';

// The signature headers of a webhook request (docs/api.md, "Webhooks"), so that a
// receiver written for Zendesk verifies ours unchanged, and so do the Standard Webhooks
// libraries (standardwebhooks.com):
//   X-Zendesk-Webhook-Signature-Timestamp: <ISO 8601 time>
//   X-Zendesk-Webhook-Signature: base64(HMAC-SHA256(secret, timestamp + body))
//   webhook-id: <message id>, webhook-timestamp: <unix seconds>,
//   webhook-signature: v1,base64(HMAC-SHA256(key, id + "." + timestamp + "." + body))
// (Zendesk's current guide and its Express receiver sign timestamp + body; an older page of
// its event connectors wrote the body first: the receivers in use follow the guide.)
// One secret serves both: Zendesk's receivers use it as the HMAC key as it is (its UTF-8
// bytes); a Standard Webhooks receiver is given the same bytes as `whsec_` + base64
// (standardWebhooksSecret), which its library decodes back into that key.

export interface SignatureInput {
  /** the webhook's signing secret */
  secret: string;
  /** the exact bytes sent as the body */
  body: string;
  /** unique per message; the same on every retry of it (receivers deduplicate on it) */
  messageId: string;
  /** when this attempt is signed */
  at: Date;
}

/** The headers that sign one attempt. */
export function signatureHeaders({ secret, body, messageId, at }: SignatureInput): Record<string, string> {
  const key = Buffer.from(secret, 'utf8');
  // Zendesk's timestamp: ISO 8601 without milliseconds, as its own requests carry it
  const zendeskTimestamp = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const unix = String(Math.floor(at.getTime() / 1000));
  return {
    'x-zendesk-webhook-signature-timestamp': zendeskTimestamp,
    'x-zendesk-webhook-signature': createHmac('sha256', key).update(zendeskTimestamp + body).digest('base64'),
    'webhook-id': messageId,
    'webhook-timestamp': unix,
    'webhook-signature': `v1,${createHmac('sha256', key).update(`${messageId}.${unix}.${body}`).digest('base64')}`,
  };
}

/** The same secret as a Standard Webhooks library takes it: `whsec_` and the key's bytes in base64. */
export function standardWebhooksSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}
