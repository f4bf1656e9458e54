import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Where a webhook may send requests (docs/api.md, "Webhooks", "Endpoint guard"). A
// webhook's endpoint is a URL an admin types in, and the service calls it: without a
// guard, anyone who may create a webhook could make the service call its own loopback,
// the private network behind it, or the cloud metadata service (SSRF). So, unless
// WEBHOOK_ALLOW_PRIVATE_ENDPOINTS (the default outside production), an endpoint must be
// https, and neither its host nor any address it resolves to may be loopback, private,
// link-local, CGNAT, unspecified, multicast or reserved. Checked when a webhook is saved
// (checkEndpoint) and again by the delivery at each request, on the address it is about
// to connect to (blockedAddressReason), since a name may resolve elsewhere by then (DNS
// rebinding).

/** What the guard allows: `allowPrivate` is WEBHOOK_ALLOW_PRIVATE_ENDPOINTS. */
export interface EndpointPolicy {
  allowPrivate: boolean;
  /** every address of a host name (tests may stand in for DNS); dns.lookup with all: true by default */
  resolve?: (hostname: string) => Promise<string[]>;
}

export const ENDPOINT_MAX_LENGTH = 2000;
/** How long a save waits for DNS before refusing the endpoint. */
const RESOLVE_TIMEOUT_MS = 5000;

const BLOCKED = new BlockList();
// IPv4: "this network", RFC 1918, loopback, link-local (the metadata service 169.254.169.254
// included), CGNAT, IETF protocol assignments, multicast, reserved and broadcast
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, prefix, 'ipv4');
// IPv6: unspecified, loopback and the deprecated IPv4-compatible range (::/96), unique
// local (fc00::/7, AWS's metadata fd00:ec2::254 included), link-local, site-local, multicast
for (const [net, prefix] of [['::', 96], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const) BLOCKED.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address an IPv6 one carries (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d), if any. */
function embeddedIPv4(address: string): string | undefined {
  // the canonical form (0:0:0:0:0:ffff:7f00:1 and ::FFFF:127.0.0.1 → ::ffff:7f00:1), as the URL parser writes it
  const lower = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const mapped = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(lower);
  if (!mapped) return undefined;
  if (mapped[1]) return mapped[1];
  const hi = parseInt(mapped[2], 16);
  const lo = parseInt(mapped[3], 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/**
 * Why the service must not connect to `address` (an IP address), or undefined when it
 * may. The delivery calls it on the address it resolved, right before it connects.
 */
export function blockedAddressReason(address: string, policy: Pick<EndpointPolicy, 'allowPrivate'>): string | undefined {
  if (policy.allowPrivate) return undefined;
  const family = isIP(address);
  if (family === 0) return 'is not an IP address';
  let v4: string | undefined;
  try {
    v4 = family === 4 ? address : embeddedIPv4(address);
  } catch {
    return 'is an IPv6 address with a zone'; // fe80::1%eth0: link-local by definition
  }
  const blocked = v4 !== undefined ? BLOCKED.check(v4, 'ipv4') : BLOCKED.check(address, 'ipv6');
  return blocked ? 'is a loopback, private, link-local or reserved address' : undefined;
}

/**
 * The check of one resolved address, as a connection's lookup calls it
 * (src/webhooks/http-attempt.ts's AddressCheck): why not, or undefined.
 */
export function addressGuard(policy: Pick<EndpointPolicy, 'allowPrivate'>): (address: string) => string | undefined {
  return (address) => blockedAddressReason(address, policy);
}

async function resolveAll(hostname: string): Promise<string[]> {
  return (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('DNS lookup timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** An endpoint that passed the guard, or why it did not (a sentence after "Endpoint: "). */
export type EndpointCheck = { ok: true; url: string } | { ok: false; problem: string };

/** The shape rules, the same in every mode: an absolute http(s) URL without credentials. */
function parseEndpoint(raw: string, policy: EndpointPolicy): URL | string {
  if (raw.length > ENDPOINT_MAX_LENGTH) return `is too long (maximum is ${ENDPOINT_MAX_LENGTH} characters)`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an absolute http or https URL';
  if (url.username || url.password) return 'must not contain credentials (user:password@)';
  if (!url.hostname) return 'must name a host';
  if (!policy.allowPrivate && url.protocol !== 'https:') return 'must use https';
  return url;
}

/**
 * Whether a webhook may be saved with this endpoint: the shape rules, and, unless
 * private endpoints are allowed, every address of its host (a literal address, or
 * every address its name resolves to now) must be public.
 */
export async function checkEndpoint(raw: string, policy: EndpointPolicy): Promise<EndpointCheck> {
  const url = parseEndpoint(raw, policy);
  if (typeof url === 'string') return { ok: false, problem: url };
  if (policy.allowPrivate) return { ok: true, url: raw };
  // the URL parser writes IPv6 hosts in brackets and IPv4 ones in dotted decimal (0x7f.1 → 127.0.0.1)
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await withTimeout((policy.resolve ?? resolveAll)(host), RESOLVE_TIMEOUT_MS);
    } catch {
      return { ok: false, problem: `host ${host} could not be resolved` };
    }
    if (addresses.length === 0) return { ok: false, problem: `host ${host} could not be resolved` };
  }
  for (const address of addresses) {
    const reason = blockedAddressReason(address, policy);
    if (reason) return { ok: false, problem: `must not point at a loopback, private, link-local or reserved address (${host}${address === host ? '' : ` resolves to ${address}`})` };
  }
  return { ok: true, url: raw };
}
