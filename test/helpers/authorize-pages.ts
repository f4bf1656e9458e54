import type { LightMyRequestResponse } from 'fastify';
import type { TestContext, TestUser } from './test-app';

// The authorization pages driven as a browser would (a cookie jar, the forms'
// hidden fields), through inject: login page, login post, consent, Allow or Deny.

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

export interface PagesBrowser {
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse>;
  /** the hidden fields of the page's form (the request's parameters and the CSRF token) */
  hiddenFields(html: string): Record<string, string>;
}

export function pagesBrowser(ctx: TestContext, host?: string): PagesBrowser {
  const jar = new Map<string, string>();
  const keep = (res: LightMyRequestResponse) => {
    const raw = res.headers['set-cookie'];
    for (const line of raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  };
  const headers = () => ({ ...(host ? { host } : {}), ...(jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}) });
  const unescape = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return {
    async get(url) {
      return keep(await ctx.inject({ method: 'GET', url, headers: headers() }));
    },
    async post(url, fields) {
      return keep(await ctx.inject({ method: 'POST', url, headers: { ...FORM, ...headers() }, payload: new URLSearchParams(fields).toString() }));
    },
    hiddenFields(html) {
      const out: Record<string, string> = {};
      for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[unescape(m[1])] = unescape(m[2]);
      return out;
    },
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
