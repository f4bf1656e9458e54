import type { LightMyRequestResponse } from 'fastify';
import type { TestContext, TestUser } from './test-app';

// The authorization pages driven as a browser would (a cookie jar, the forms'
// hidden fields), through inject: login page, login post, consent, Allow or Deny.

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

export interface PagesBrowser {
  /** the cookies it holds, by name, values as the server sent them (a test may read or tamper with them) */
  jar: Map<string, string>;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse>;
  /** the hidden fields of the page's form (the request's parameters and the CSRF token) */
  hiddenFields(html: string): Record<string, string>;
}

/** A Set-Cookie line as a browser reads it: value as sent (still encoded), and the attributes the tests check. */
export interface SetCookie {
  name: string;
  value: string;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: string;
  path?: string;
  maxAge?: number;
}

export function setCookies(res: LightMyRequestResponse): SetCookie[] {
  const raw = res.headers['set-cookie'];
  return (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]).map((line) => {
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

const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The hidden fields of a page's form (the request's parameters and the CSRF token). */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[unescape(m[1])] = unescape(m[2]);
  return out;
}

/** The page's heading, without its markup. */
export const heading = (html: string) => /<h1>(.*?)<\/h1>/s.exec(html)?.[1].replace(/<[^>]+>/g, '') ?? '';

/** The error message the page shows, if any. */
export const pageError = (html: string) => /<div class="error" role="alert">(.*?)<\/div>/s.exec(html)?.[1];

export function pagesBrowser(ctx: TestContext, host?: string): PagesBrowser {
  const jar = new Map<string, string>();
  const keep = (res: LightMyRequestResponse) => {
    for (const c of setCookies(res)) jar.set(c.name, c.value);
    return res;
  };
  const headers = () => ({ ...(host ? { host } : {}), ...(jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}) });
  return {
    jar,
    async get(url) {
      return keep(await ctx.inject({ method: 'GET', url, headers: headers() }));
    },
    async post(url, fields) {
      return keep(await ctx.inject({ method: 'POST', url, headers: { ...FORM, ...headers() }, payload: new URLSearchParams(fields).toString() }));
    },
    hiddenFields,
  };
}

/** Login page → login → consent page: the consent page's response (200, with the Allow form). */
export async function signInToConsent(browser: PagesBrowser, authorizeUrl: string, user: TestUser): Promise<LightMyRequestResponse> {
  const login = await browser.get(authorizeUrl);
  if (login.statusCode !== 200) throw new Error(`login page: ${login.statusCode}`);
  const signedIn = await browser.post('/oauth/authorizations/login', { ...browser.hiddenFields(login.body), email: user.email, password: user.password });
  if (signedIn.statusCode !== 303) throw new Error(`login: ${signedIn.statusCode} ${signedIn.body}`);
  return browser.get(signedIn.headers.location as string);
}

/** An account with an admin, an agent to sign in, and a public client of the pages (read write, one redirect URI). */
export async function pagesFixture(ctx: TestContext, redirectUri: string, client: { name?: string; company?: string } = {}): Promise<{ admin: TestUser; agent: TestUser; clientId: string }> {
  const account = await ctx.createAccount();
  const admin = await ctx.createUser(account, 'admin');
  const agent = await ctx.createUser(account, 'agent');
  const res = await ctx.inject({
    method: 'POST', url: '/api/v2/oauth/clients', headers: { authorization: admin.basic },
    payload: { name: client.name ?? 'Pages app', ...(client.company ? { company: client.company } : {}), client_type: 'public', scopes: 'read write', redirect_uris: [redirectUri] },
  });
  if (res.statusCode !== 201) throw new Error(`creating the pages' client answered ${res.statusCode}: ${res.body}`);
  return { admin, agent, clientId: res.json().client_identifier };
}
