// Server-rendered pages under /oauth (login, consent, errors, sign-out, authorized apps):
// plain HTML and a little inline CSS, no script, no build step. Every value that
// comes from a client or a user goes through escapeHtml().

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const STYLE = `
  *{box-sizing:border-box}
  body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;
       font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f5f7;color:#1f2933}
  main{width:100%;max-width:420px;margin:24px;padding:32px;background:#fff;border-radius:12px;
       box-shadow:0 1px 3px rgba(0,0,0,.08),0 8px 24px rgba(0,0,0,.06)}
  h1{font-size:22px;margin:0 0 8px}
  p{margin:0 0 16px;color:#52606d}
  .app{font-weight:600;color:#1f2933}
  label{display:block;font-weight:600;margin:16px 0 4px}
  input[type=email],input[type=password]{width:100%;padding:10px 12px;border:1px solid #cbd2d9;border-radius:8px;font:inherit}
  input:focus{outline:2px solid #2f80ed;outline-offset:1px}
  .actions{display:flex;gap:12px;margin-top:24px}
  button{flex:1;padding:10px 16px;border-radius:8px;border:1px solid #2f80ed;font:inherit;font-weight:600;cursor:pointer}
  button.primary{background:#2f80ed;color:#fff}
  button.secondary{background:#fff;color:#2f80ed}
  ul.scopes{margin:0 0 8px;padding:0;list-style:none}
  ul.scopes li{padding:10px 12px;margin:0 0 8px;background:#f3f5f7;border-radius:8px}
  .error{padding:10px 12px;margin:0 0 16px;border-radius:8px;background:#fdecea;color:#8a1c1c}
  .muted{font-size:14px;color:#7b8794}
  main.wide{max-width:640px}
  .notice{padding:10px 12px;margin:0 0 16px;border-radius:8px;background:#e8f4ec;color:#1d5b34}
  ul.apps{margin:16px 0;padding:0;list-style:none}
  ul.apps>li{display:flex;gap:16px;align-items:flex-start;justify-content:space-between;padding:16px;margin:0 0 12px;border:1px solid #e4e7eb;border-radius:10px}
  ul.apps h2{font-size:17px;margin:0 0 4px}
  ul.apps ul{margin:8px 0;padding-left:18px;color:#52606d;font-size:14px}
  ul.apps ul li{margin:2px 0}
  ul.apps form{flex:none}
  ul.apps p{margin:0}
  button.danger{background:#fff;color:#c0392b;border-color:#c0392b;flex:none}
  .signout{margin-top:24px;padding-top:16px;border-top:1px solid #e4e7eb;display:flex;align-items:center;justify-content:space-between;gap:12px}
  .signout button{flex:none}
  a{color:#2f80ed}
`;

/** The doctype and <head> every page of the service shares (charset, viewport, no referrer, its title), then `extra` (its styles). */
export function documentHead(title: string, extra: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
${extra}
</head>`;
}

function layout(title: string, body: string, wide = false): string {
  return `${documentHead(title, `<style>${STYLE}</style>`)}
<body>
<main${wide ? ' class="wide"' : ''}>
${body}
</main>
</body>
</html>
`;
}

/** Hidden inputs carrying the authorization request through the forms. */
function hiddenFields(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v!)}">`)
    .join('\n');
}

const notice = (text?: string) => (text ? `<div class="notice" role="status">${escapeHtml(text)}</div>\n` : '');

/** The sign-in form: to continue to an app (`clientName`), or for a page of the person's own (`purpose`). */
export function loginPage(options: {
  clientName?: string; purpose?: string; action: string; csrf: string; request: Record<string, string>; error?: string; email?: string; notice?: string;
}): string {
  const error = options.error ? `<div class="error" role="alert">${escapeHtml(options.error)}</div>` : '';
  const why = options.clientName !== undefined ? `to continue to <span class="app">${escapeHtml(options.clientName)}</span>` : escapeHtml(options.purpose ?? '');
  return layout(
    'Sign in',
    `<h1>Sign in</h1>
<p>${why}</p>
${notice(options.notice)}${error}
<form method="post" action="${escapeHtml(options.action)}">
${hiddenFields({ ...options.request, csrf_token: options.csrf })}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(options.email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`,
  );
}

export function consentPage(options: {
  clientName: string;
  company: string | null;
  userEmail: string;
  scopes: string[];
  action: string;
  csrf: string;
  request: Record<string, string>;
}): string {
  const company = options.company ? ` <span class="muted">by ${escapeHtml(options.company)}</span>` : '';
  const items = options.scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join('\n');
  return layout(
    'Authorize access',
    `<h1>Authorize <span class="app">${escapeHtml(options.clientName)}</span>${company}</h1>
<p>${escapeHtml(options.clientName)} asks to act as <strong>${escapeHtml(options.userEmail)}</strong> and to:</p>
<ul class="scopes">
${items}
</ul>
<form method="post" action="${escapeHtml(options.action)}">
${hiddenFields({ ...options.request, csrf_token: options.csrf })}
<div class="actions">
<button class="secondary" type="submit" name="decision" value="deny">Deny</button>
<button class="primary" type="submit" name="decision" value="allow">Allow</button>
</div>
</form>
<p class="muted">You can revoke this access at any time.</p>`,
  );
}

/** An error page; `footer` defaults to the authorization pages' (nothing was shared with the app). */
export function errorPage(options: { title: string; message: string; footer?: string }): string {
  const footer = options.footer ?? 'Nothing was shared with the application. You can close this page.';
  return layout(options.title, `<h1>${escapeHtml(options.title)}</h1>\n<div class="error" role="alert">${escapeHtml(options.message)}</div>\n<p class="muted">${escapeHtml(footer)}</p>`);
}

/** One entry of the authorized apps page, ready to show (scopes described, times formatted). */
export interface AppEntry {
  id: string;
  name: string;
  company: string | null;
  scopes: string[];
  grantedAt: Date;
  lastUsedAt: Date | null;
}

const when = (d: Date) =>
  `<time datetime="${d.toISOString()}">${escapeHtml(d.toLocaleString('en-GB', { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' }))} UTC</time>`;

/** A form of one button (and its hidden fields) posting to `action`. */
function buttonForm(action: string, fields: Record<string, string | undefined>, button: string, cls: string): string {
  return `<form method="post" action="${escapeHtml(action)}">
${hiddenFields(fields)}
<button class="${cls}" type="submit">${escapeHtml(button)}</button>
</form>`;
}

/** The person's authorized apps, each with a Revoke button, and Sign out. */
export function authorizedAppsPage(options: {
  userEmail: string; apps: AppEntry[]; csrf: string; revokeAction: string; signOutAction: string; returnTo: string; notice?: string;
}): string {
  const items = options.apps.map((app) => {
    const company = app.company ? ` <span class="muted">by ${escapeHtml(app.company)}</span>` : '';
    const scopes = app.scopes.map((s) => `<li>${escapeHtml(s)}</li>`).join('');
    const used = app.lastUsedAt ? `last used ${when(app.lastUsedAt)}` : 'never used';
    return `<li>
<div>
<h2>${escapeHtml(app.name)}${company}</h2>
<ul>${scopes}</ul>
<p class="muted">Allowed ${when(app.grantedAt)} · ${used}</p>
</div>
${buttonForm(options.revokeAction, { id: app.id, csrf_token: options.csrf }, 'Revoke', 'danger')}
</li>`;
  });
  const list = items.length ? `<ul class="apps">\n${items.join('\n')}\n</ul>` : '<p>No app can access your account.</p>';
  return layout(
    'Authorized apps',
    `<h1>Authorized apps</h1>
<p>Apps that can act as <strong>${escapeHtml(options.userEmail)}</strong>. Revoking an app ends its access at once.</p>
${notice(options.notice)}${list}
<div class="signout">
<span class="muted">Signed in as ${escapeHtml(options.userEmail)}</span>
${buttonForm(options.signOutAction, { csrf_token: options.csrf, return_to: options.returnTo }, 'Sign out', 'secondary')}
</div>`,
    true,
  );
}

/** GET /oauth/logout with a live session: the Sign out button. */
export function signOutPage(options: { userEmail: string; action: string; csrf: string; returnTo?: string }): string {
  return layout(
    'Sign out',
    `<h1>Sign out</h1>
<p>You are signed in as <strong>${escapeHtml(options.userEmail)}</strong>.</p>
<div class="actions">
${buttonForm(options.action, { csrf_token: options.csrf, return_to: options.returnTo }, 'Sign out', 'primary')}
</div>`,
  );
}

/** After /oauth/logout (or without a session). */
export function signedOutPage(): string {
  return layout('Signed out', `<h1>You are signed out</h1>\n<p>Your sign-in session has ended. You can close this page.</p>`);
}
