import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../domain/services';
import { BadRequestError } from '../domain/errors';
import { SUBDOMAIN_PATTERN } from '../domain/directory/account.service';
import type { GraphQLContext } from '../graphql/context';
import { Loaders } from '../graphql/loaders';
import type { Viewer } from '../domain/auth/viewer';

function header(request: Pick<FastifyRequest, 'headers'>, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

// One DNS label as Host headers carry them (underscores occur in real names).
const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/i;

export interface ParsedHost {
  /** lower-cased, without the brackets of an IPv6 literal */
  hostname: string;
  /** as sent: the hostname in its original form and the port, for building URLs */
  host: string;
  ip: boolean;
}

/**
 * The Host header, if it is one: a DNS name (labels of letters, digits, '-' and
 * '_', at most 253 characters, an optional final dot) or an IP literal (IPv4, or
 * IPv6 in brackets), with an optional port 1–65535. Anything else (empty, spaces,
 * "[", a port out of range, userinfo, a path) is undefined.
 */
function parseHost(raw: string | undefined): ParsedHost | undefined {
  if (raw === undefined || raw.length === 0 || raw.length > 300) return undefined;
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(raw);
  if (!m) return undefined;
  const [, name, port] = m;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined;
  if (name.startsWith('[')) {
    const address = name.slice(1, -1);
    return isIP(address) === 6 ? { hostname: address.toLowerCase(), host: raw, ip: true } : undefined;
  }
  if (isIP(name) === 4) return { hostname: name, host: raw, ip: true };
  const hostname = name.toLowerCase().replace(/\.$/, '');
  const labels = hostname.split('.');
  if (hostname.length === 0 || hostname.length > 253 || !labels.every((label) => LABEL.test(label))) return undefined;
  // A numeric last label makes URL parsers read the whole name as an IPv4 address (and fail on 999.1.1.1).
  if (/^(0x[0-9a-f]*|\d+)$/.test(labels[labels.length - 1])) return undefined;
  try {
    new URL(`http://${raw}/`); // and whatever else a URL parser refuses (bad punycode)
  } catch {
    return undefined;
  }
  return { hostname, host: raw, ip: false };
}

export interface RequestHost {
  /** base of url fields, Location headers and pagination links */
  baseUrl: string;
  /** the account subdomain the request came on; undefined on the plain host */
  subdomain?: string;
}

/**
 * Where a request came: its base URL and, on `{subdomain}.<the service's host>`, the
 * account subdomain it acts in (decisions, for docs/api.md):
 * - With PUBLIC_URL set, the base URL always comes from PUBLIC_URL, never from the
 *   Host header; a Host `{subdomain}.<PUBLIC_URL's host>` (any port: proxies change
 *   it) is that subdomain, with the subdomain put in front of PUBLIC_URL's host in
 *   the base URL; any other Host, a bad or missing one included, is the plain host.
 * - With PUBLIC_URL unset (development; production requires it), the base URL is the
 *   request's own scheme and Host, `{subdomain}.localhost[:port]` is that subdomain
 *   (so that `curl http://acme.localhost:3000/...` works), and a Host that is not a
 *   host name or IP literal with an optional port 1–65535 (or none at all, as HTTP/1.0
 *   allows) is refused: 400 InvalidRequest "Invalid Host header" on both APIs, never
 *   a 500 from building a URL of it.
 */
export function createHostResolver(publicUrl: string | undefined): (request: Pick<FastifyRequest, 'headers' | 'protocol'>) => RequestHost {
  if (publicUrl !== undefined) {
    const base = new URL(publicUrl);
    const suffix = `.${base.hostname}`;
    // An IP address has no subdomains.
    const subdomains = isIP(base.hostname.replace(/^\[|\]$/g, '')) === 0;
    const baseFor = (subdomain: string) => {
      const u = new URL(publicUrl);
      u.hostname = `${subdomain}.${u.hostname}`;
      return u.href.replace(/\/+$/, '');
    };
    return (request) => {
      const host = subdomains ? parseHost(header(request, 'host')) : undefined;
      if (host && !host.ip && host.hostname.endsWith(suffix)) {
        const subdomain = host.hostname.slice(0, -suffix.length);
        if (SUBDOMAIN_PATTERN.test(subdomain)) return { baseUrl: baseFor(subdomain), subdomain };
      }
      return { baseUrl: publicUrl };
    };
  }
  return (request) => {
    const host = parseHost(header(request, 'host'));
    if (!host) throw new BadRequestError('Invalid Host header');
    const baseUrl = `${request.protocol}://${host.host}`;
    if (!host.ip && host.hostname.endsWith('.localhost')) {
      const subdomain = host.hostname.slice(0, -'.localhost'.length);
      if (SUBDOMAIN_PATTERN.test(subdomain)) return { baseUrl, subdomain };
    }
    return { baseUrl };
  };
}

/**
 * The one place a request becomes a context: the Host (createHostResolver), then
 * authentication (and impersonation), for GraphQL and REST alike. Throws the
 * domain's errors (BadRequestError for a bad Host, the auth errors).
 *
 * `guardHost`, a Fastify onRequest hook for the GraphQL route: Apollo's Fastify
 * integration builds `new URL(url, protocol://hostname/)` before it asks for the
 * context, so a bad Host made it throw (a 500) before the check above could run.
 * The hook answers such a request 400 BAD_REQUEST "Invalid Host header" in GraphQL's
 * shape (PUBLIC_URL unset), or makes it the plain host (PUBLIC_URL set: the Host
 * header becomes PUBLIC_URL's host, which is what a bad Host means then).
 */
export function createContextBuilder(services: Services, publicUrl: string | undefined) {
  const resolveHost = createHostResolver(publicUrl);
  const publicHost = publicUrl === undefined ? undefined : new URL(publicUrl).host;
  const build = async (request: FastifyRequest): Promise<GraphQLContext> => {
    const { baseUrl, subdomain } = resolveHost(request);
    const viewer = await services.authenticator.authenticate({
      authorization: header(request, 'authorization'),
      onBehalfOf: header(request, 'x-on-behalf-of'),
      // Fastify's request.ip: the peer's address, or the client a trusted proxy (TRUST_PROXY) forwards
      address: request.ip,
      subdomain,
    });
    // The viewer may come from the Basic cache: the request's origin goes on a copy.
    const origin = { via: request.url.startsWith('/api/') ? 'api' : 'graphql', requestId: String(request.id), ipAddress: request.ip } as const;
    return {
      viewer: viewer && { ...viewer, origin },
      services,
      baseUrl,
      loaders: viewer ? new Loaders(services, viewer, baseUrl) : null,
    };
  };
  const guardHost = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (parseHost(header(request, 'host'))) return;
    if (publicHost !== undefined) {
      request.raw.headers.host = publicHost;
      return;
    }
    await reply
      .code(400)
      .type('application/json; charset=utf-8')
      .send({ errors: [{ message: 'Invalid Host header', extensions: { code: 'BAD_REQUEST' } }] });
  };
  /**
   * The viewer of credentials sent some other way than the Authorization header
   * (a WebSocket connection's connection_init payload), on the request's Host, by
   * the same authenticator; null without credentials. X-On-Behalf-Of does not apply.
   */
  const authenticateWith = async (request: FastifyRequest, authorization: string | undefined): Promise<Viewer | null> => {
    const { subdomain } = resolveHost(request);
    return services.authenticator.authenticate({ authorization, address: request.ip, subdomain });
  };
  return Object.assign(build, { guardHost, authenticateWith });
}

export type ContextBuilder = ReturnType<typeof createContextBuilder>;
