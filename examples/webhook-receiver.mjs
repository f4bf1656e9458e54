// A webhook receiver in plain Node (no dependencies) that accepts only requests the
// service signed with this webhook's secret, as Zendesk documents the check:
// base64(HMAC-SHA256(secret, timestamp + body)) in X-Zendesk-Webhook-Signature, the
// timestamp in X-Zendesk-Webhook-Signature-Timestamp. It also refuses a timestamp more
// than 5 minutes away (a replayed request), compares in constant time, and answers 200
// quickly (the service waits at most 12 s and retries anything else).
//
//   WEBHOOK_SECRET=<GET /api/v2/webhooks/{id}/signing_secret> node examples/webhook-receiver.mjs
//
// PORT (default 4000; 0 picks a free one) and HOST (default 127.0.0.1) say where it listens.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('WEBHOOK_SECRET is not set: give it the secret of GET /api/v2/webhooks/{id}/signing_secret');
  process.exit(1);
}
const TOLERANCE_SECONDS = 300;

function verified(body, signature, timestamp) {
  if (typeof signature !== 'string' || typeof timestamp !== 'string') return false;
  const signedAt = Date.parse(timestamp);
  if (Number.isNaN(signedAt) || Math.abs(Date.now() - signedAt) > TOLERANCE_SECONDS * 1000) return false;
  const expected = createHmac('sha256', secret).update(timestamp + body).digest();
  const given = Buffer.from(signature, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    if (!verified(body, req.headers['x-zendesk-webhook-signature'], req.headers['x-zendesk-webhook-signature-timestamp'])) {
      console.log('refused: bad or stale signature');
      res.writeHead(401).end();
      return;
    }
    const event = JSON.parse(body);
    console.log(`verified ${event.type} ${event.subject} (${req.headers['webhook-id']})`);
    res.writeHead(200).end();
  });
});

server.listen(Number(process.env.PORT ?? 4000), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  console.log(`listening on http://${address}:${port}/hook`);
});
