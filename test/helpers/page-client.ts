import type { LightMyRequestResponse } from 'fastify';
import type { TestContext } from './test-app';

// A browser without a browser, for the authorization pages: it keeps the cookies
// the server sets (per name, as a browser would for one site), sends them back,
// posts forms urlencoded and reads the hidden fields of the page it got. It follows
// no redirect: the tests look at each Location themselves.

export interface SetCookie {
  name: string;
  value: string;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: string;
  path?: string;
  maxAge?: number;
}

/** The Set-Cookie lines of an answer, values as sent (still encoded), attributes read as a browser would. */
export function setCookies(res: LightMyRequestResponse): SetCookie[] {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return lines.map((line) => {
    const [pair, ...attributes] = line.split(/;\s*/);
    const eq = pair.indexOf('=');
    const cookie: SetCookie = { name: pair.slice(0, eq), value: pair.slice(eq + 1) };
    for (const attribute of attributes) {
      const [key, value] = attribute.split('=');
      const k = key.toLowerCase();
      if (k === 'httponly') cookie.httpOnly = true;
      else if (k === 'secure') cookie.secure = true;
      else if (k === 'samesite') cookie.sameSite = value;
      else if (k === 'path') cookie.path = value;
      else if (k === 'max-age') cookie.maxAge = Number(value);
    }
    return cookie;
  });
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#x27;': "'" };
const unescapeHtml = (s: string) => s.replace(/&(?:amp|lt|gt|quot|#39|#x27);/g, (m) => ENTITIES[m]);

/** The hidden inputs of the page's form, by name. */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[unescapeHtml(m[1])] = unescapeHtml(m[2]);
  return out;
}

/** The page's heading, without its markup. */
export const heading = (html: string) => /<h1>(.*?)<\/h1>/s.exec(html)?.[1].replace(/<[^>]+>/g, '') ?? '';

/** The error message shown on the page, if any. */
export const pageError = (html: string) => /<div class="error" role="alert">(.*?)<\/div>/s.exec(html)?.[1];

export class PageClient {
  readonly jar = new Map<string, string>();

  constructor(
    private readonly ctx: TestContext,
    private readonly headers: Record<string, string> = {},
  ) {}

  get(url: string): Promise<LightMyRequestResponse> {
    return this.send({ method: 'GET', url });
  }

  post(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.send({ method: 'POST', url, payload: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });
  }

  /** A copy of this client's cookies in a new client (a second tab of the same browser, or a stolen cookie). */
  clone(): PageClient {
    const other = new PageClient(this.ctx, this.headers);
    for (const [k, v] of this.jar) other.jar.set(k, v);
    return other;
  }

  private async send(opts: { method: 'GET' | 'POST'; url: string; payload?: string; contentType?: string }) {
    const headers: Record<string, string> = { ...this.headers };
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (opts.contentType) headers['content-type'] = opts.contentType;
    const res = await this.ctx.inject({ method: opts.method, url: opts.url, headers, payload: opts.payload });
    for (const c of setCookies(res)) {
      if (c.maxAge === 0 || c.value === '') this.jar.delete(c.name);
      else this.jar.set(c.name, c.value);
    }
    return res;
  }
}
