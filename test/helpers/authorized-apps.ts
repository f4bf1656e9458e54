import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { pagesBrowser, signInToConsent, type PagesBrowser } from './authorize-pages';
import { RFC7636 } from './oauth-server';
import type { TestContext, TestUser } from './test-app';

// A person's consent through the real authorization pages over real HTTP (fetch,
// redirects followed by hand, cookies kept), then the code's exchange: what the
// tests of "Your authorized apps" start from, on an in-process server or on a
// spawned server process alike.

/** The pages' browser (test/helpers/authorize-pages.ts) over fetch to `base` instead of inject. */
export function httpPagesBrowser(base: string): PagesBrowser {
  const inject = async (opts: InjectOptions): Promise<LightMyRequestResponse> => {
    const url = String(opts.url);
    const res = await fetch(url.startsWith('http') ? url : `${base}${url}`, {
      method: opts.method as string, headers: opts.headers as Record<string, string>, body: opts.payload as string | undefined, redirect: 'manual',
    });
    const headers: Record<string, string | string[]> = Object.fromEntries(res.headers);
    headers['set-cookie'] = res.headers.getSetCookie();
    return { statusCode: res.status, headers, body: await res.text() } as unknown as LightMyRequestResponse;
  };
  return pagesBrowser({ inject } as unknown as TestContext);
}

export interface Consented {
  access: string;
  refresh: string;
}

/**
 * `who` signs in on the authorization page of `base`, allows the public client `clientId`
 * (PKCE, `scope`; no consent page when `who` allowed these scopes already: the same grant),
 * and the client exchanges the code: its access and refresh tokens.
 */
export async function consentAndExchange(base: string, clientId: string, redirectUri: string, who: { email: string; password: string }, scope = 'read write'): Promise<Consented> {
  const browser = httpPagesBrowser(base);
  const query = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope, state: 'st', code_challenge: RFC7636.challenge, code_challenge_method: 'S256',
  });
  const consent = await signInToConsent(browser, `/oauth/authorizations/new?${query}`, who as TestUser);
  // a consent already given for these scopes is remembered (docs/api.md, "Remembered consent"): straight back with a code of that grant
  const remembered = consent.statusCode === 302;
  if (!remembered && consent.statusCode !== 200) throw new Error(`consent page: ${consent.statusCode}`);
  const allowed = remembered ? consent : await browser.post('/oauth/authorizations', { ...browser.hiddenFields(consent.body), decision: 'allow' });
  if (!remembered && allowed.statusCode !== 303) throw new Error(`allow: ${allowed.statusCode} ${allowed.body}`);
  const code = new URL(allowed.headers.location as string).searchParams.get('code');
  if (!code) throw new Error(`allow redirected without a code: ${allowed.headers.location}`);
  const res = await fetch(`${base}/oauth/tokens`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: RFC7636.verifier }),
  });
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  if (res.status !== 200) throw new Error(`exchange: ${res.status} ${JSON.stringify(body)}`);
  return { access: body.access_token, refresh: body.refresh_token };
}

/** grant_type=refresh_token for a public client: the status and the error, if any. */
export async function refresh(base: string, clientId: string, refreshToken: string): Promise<{ status: number; error?: string }> {
  const res = await fetch(`${base}/oauth/tokens`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }),
  });
  const body = (await res.json()) as { error?: string };
  return { status: res.status, error: body.error };
}
