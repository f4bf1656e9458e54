import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

// One HTTP attempt of a webhook delivery (docs/api.md, "Webhooks"): the request goes to
// an address that the endpoint guard accepted after DNS resolution, on the very socket
// that connects to it (no second lookup an attacker's DNS could answer differently:
// DNS rebinding), without following redirects, within a deadline; the answer is kept
// as status, duration, a Retry-After and the first KB of the body.

/** What may be said of a resolved address: undefined when it may be reached, else why not. */
export type AddressCheck = (address: string, family: 4 | 6) => string | undefined;

export interface AttemptRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  check: AddressCheck;
  signal?: AbortSignal;
}

export type AttemptResult =
  | { kind: 'response'; status: number; durationMs: number; retryAfterSeconds?: number; body: string }
  | { kind: 'refused'; durationMs: number; reason: string }
  | { kind: 'error'; durationMs: number; reason: string };

/** Bytes of a receiver's answer kept for the attempt log. */
const RESPONSE_KEPT_BYTES = 1024;

/** Refused address: the error the guarded lookup fails the connection with. */
class AddressRefused extends Error {}

/** dns.lookup, every address checked: the connection fails unless all of them may be reached. */
function guardedLookup(check: AddressCheck): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 4);
      for (const a of addresses) {
        const why = check(a.address, a.family === 6 ? 6 : 4);
        if (why) return callback(new AddressRefused(`${hostname} resolves to ${a.address}: ${why}`), '', 4);
      }
      const first = addresses[0];
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Idle connections a receiver keeps: closed by us before a receiver's usual 5 s keep-alive would close them under a request. */
const IDLE_SOCKET_MS = 4000;
const agents = new WeakMap<AddressCheck, { http: http.Agent; https: https.Agent }>();

/**
 * Keep-alive agents of one address check: a connection is made through the guarded
 * lookup, so every new connection is checked, and a kept one stays to the address that
 * passed. Per check, so that a connection allowed by one policy never serves another.
 */
function agentsOf(check: AddressCheck) {
  let pair = agents.get(check);
  if (!pair) {
    const options = { keepAlive: true, maxSockets: 50, timeout: IDLE_SOCKET_MS, lookup: guardedLookup(check) };
    pair = { http: new http.Agent(options), https: new https.Agent(options) };
    agents.set(check, pair);
  }
  return pair;
}

export function attempt(request: AttemptRequest): Promise<AttemptResult> {
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(result);
    };
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return finish({ kind: 'refused', durationMs: 0, reason: 'not a URL' });
    }
    const secure = url.protocol === 'https:';
    const req = (secure ? https : http).request(url, {
      method: request.method,
      headers: { ...request.headers, ...(request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) }) },
      // kept-alive connections, per address check (agentsOf), each new one made through the check's guarded lookup;
      // a new TLS handshake per delivery would cap the rate
      agent: agentsOf(request.check)[secure ? 'https' : 'http'],
      signal: request.signal,
    });
    const deadline = setTimeout(() => {
      req.destroy(new Error(`no answer within ${request.timeoutMs / 1000} s`));
    }, request.timeoutMs);
    req.on('error', (err) => {
      if (err instanceof AddressRefused) finish({ kind: 'refused', durationMs: elapsed(), reason: err.message });
      else finish({ kind: 'error', durationMs: elapsed(), reason: err.message });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (chunk: Buffer) => {
        if (kept < RESPONSE_KEPT_BYTES) {
          chunks.push(chunk.subarray(0, RESPONSE_KEPT_BYTES - kept));
          kept += Math.min(chunk.length, RESPONSE_KEPT_BYTES - kept);
        }
      });
      const done = () =>
        finish({
          kind: 'response',
          status: res.statusCode ?? 0,
          durationMs: elapsed(),
          retryAfterSeconds: retryAfterSeconds(res.headers['retry-after']),
          body: Buffer.concat(chunks).toString('utf8'),
        });
      res.on('end', done);
      res.on('error', done);
    });
    // the IP of a literal-address URL is checked too (no lookup happens for it)
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (/^[\d.]+$/.test(literal) || literal.includes(':')) {
      const why = request.check(literal, literal.includes(':') ? 6 : 4);
      if (why) {
        req.destroy();
        return finish({ kind: 'refused', durationMs: 0, reason: `${literal}: ${why}` });
      }
    }
    req.end(request.body);
  });
}
