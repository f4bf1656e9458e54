import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signatureHeaders, standardWebhooksSecret } from '../src/webhooks/signing';

// Our webhook signatures, checked by the receivers' own code, not ours: Zendesk's
// verification snippet (developer.zendesk.com, "Verifying webhook authenticity") and
// the standardwebhooks library.

/** Zendesk's documented receiver check, as its guide writes it. */
function zendeskIsValidSignature(signature: string, body: string, timestamp: string, signingSecret: string): boolean {
  const hmac = createHmac('sha256', signingSecret);
  const sig = hmac.update(timestamp + body).digest('base64');
  return Buffer.compare(Buffer.from(signature), Buffer.from(sig)) === 0;
}

describe('webhook signatures', () => {
  const secret = randomBytes(32).toString('base64url');
  const body = JSON.stringify({ type: 'zen:event-type:oauth_client.created', detail: { id: '1', name: 'Dashboard ✓' } });
  const at = new Date();
  const headers = signatureHeaders({ secret, body, messageId: 'msg_01J9', at });

  it("verify with Zendesk's snippet", () => {
    expect(zendeskIsValidSignature(headers['x-zendesk-webhook-signature'], body, headers['x-zendesk-webhook-signature-timestamp'], secret)).toBe(true);
    expect(zendeskIsValidSignature(headers['x-zendesk-webhook-signature'], body + ' ', headers['x-zendesk-webhook-signature-timestamp'], secret)).toBe(false);
    expect(zendeskIsValidSignature(headers['x-zendesk-webhook-signature'], body, headers['x-zendesk-webhook-signature-timestamp'], `${secret}x`)).toBe(false);
  });

  it('verify with the standardwebhooks library, given the secret as whsec_…', () => {
    const receiver = new Webhook(standardWebhooksSecret(secret));
    expect(receiver.verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => receiver.verify(body.replace('Dashboard', 'Dashboarc'), headers)).toThrow();
    expect(() => new Webhook(standardWebhooksSecret(`${secret}x`)).verify(body, headers)).toThrow();
  });

  it('are refused by the library when stale (its 5-minute tolerance): the timestamp is the signing time', () => {
    const old = signatureHeaders({ secret, body, messageId: 'msg_old', at: new Date(Date.now() - 10 * 60_000) });
    expect(() => new Webhook(standardWebhooksSecret(secret)).verify(body, old)).toThrow(/timestamp/i);
  });
});
