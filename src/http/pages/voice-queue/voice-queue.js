'use strict';
// The live queue page (/voice/queue; docs/api.md, "The live queue page"), in the browser.
// Plain JavaScript, no build step: the server serves this file as it is.
//
// The person gives an API token (kept in sessionStorage: this tab only, gone with it).
// The page reads everything with one GraphQL query on POST /graphql, and holds three
// subscriptions over graphql-ws (the package's browser build, the global graphqlWs,
// served beside this file) on the same path. Every event only says "something changed":
// the page answers it by running the query again (events close together make one query),
// so what it shows is always one consistent answer of the server, never a patchwork.
// Values from the server reach the page as text (textContent), never as HTML.

(() => {
  const TOKEN_KEY = 'helpdesk.voiceQueue.token';
  // relative to /voice/queue, so that a proxy's path prefix is kept
  const GRAPHQL_URL = new URL('../graphql', location.href).href;
  const WS_URL = GRAPHQL_URL.replace(/^http/, 'ws');
  // The server's wait times move with the clock, not only with events, and an event
  // sent while the socket was reconnecting is not replayed: a quiet re-read now and then.
  const REFRESH_MS = 30_000;
  // events within this time are answered by one query
  const COALESCE_MS = 150;

  const QUERY = `query VoiceQueue {
  currentQueueActivity { agentsOnline callbacksWaiting averageWaitTime longestWaitTime }
  agentsActivity { agentId name agentState callStatus callsAccepted callsMissed callbacksCompleted }
  phoneNumbers(perPage: 100) { id displayNumber }
  queued: callbackRequests(status: QUEUED, first: 100) { ...Rows }
  offered: callbackRequests(status: OFFERED, first: 100) { ...Rows }
  dialing: callbackRequests(status: DIALING, first: 100) { ...Rows }
}
fragment Rows on CallbackRequestConnection {
  totalCount
  edges { node { id requesterPhoneNumber phoneNumberId status agentId queuePosition estimatedWaitTime createdAt } }
}`;
  const SUBSCRIPTIONS = [
    'subscription QueueCallbacks { callbackRequestUpdated { id } }',
    'subscription QueueActivity { queueActivityUpdated { callbacksWaiting } }',
    'subscription QueueAgents { agentAvailabilityChanged { agentId } }',
  ];

  const STATUS = { QUEUED: 'Queued', OFFERED: 'Offered', DIALING: 'Dialing' };
  const AGENT_STATE = { ONLINE: 'Online', AWAY: 'Away', OFFLINE: 'Offline', TRANSFERS_ONLY: 'Transfers only' };
  const CALL_STATUS = { ON_CALL: 'On call', WRAP_UP: 'Wrap-up' };

  const $ = (id) => document.getElementById(id);

  let token = stored();
  /** the graphql-ws client of the current sign-in; null when signed out or stopped */
  let live = null;
  /** the query under way, and whether an event came meanwhile (then it runs once more) */
  let running = null;
  let again = false;
  let soonTimer = null;
  /** server clock − this clock (ms), when they differ by more than the Date header's second */
  let skew = 0;
  /** the "Waited" cells, with when their request was queued */
  let waited = [];

  function stored() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch {
      return null;
    }
  }
  function store(value) {
    try {
      if (value) sessionStorage.setItem(TOKEN_KEY, value);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch {
      // storage refused (a private mode): the token lives until the page is left
    }
  }

  // ---- formatting -------------------------------------------------------------------

  const pad = (n) => String(n).padStart(2, '0');
  function duration(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    if (s < 60) return `${s} s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m} min ${pad(s % 60)} s`;
    return `${Math.floor(m / 60)} h ${pad(m % 60)} min`;
  }
  const NONE = '—';

  function cell(row, text, className) {
    const td = document.createElement('td');
    td.textContent = text;
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }
  function badgeCell(row, value, label) {
    const td = document.createElement('td');
    if (value) {
      const span = document.createElement('span');
      span.className = 'badge';
      span.dataset.value = value;
      span.textContent = label || value;
      td.appendChild(span);
    } else {
      td.textContent = NONE;
      td.className = 'muted';
    }
    row.appendChild(td);
    return td;
  }
  function emptyRow(columns, text) {
    const tr = document.createElement('tr');
    const td = cell(tr, text, 'empty');
    td.colSpan = columns;
    return tr;
  }

  // ---- rendering --------------------------------------------------------------------

  function render(data) {
    const activity = data.currentQueueActivity;
    $('agents-online').textContent = String(activity.agentsOnline);
    $('callbacks-waiting').textContent = String(activity.callbacksWaiting);
    $('average-wait').textContent = duration(activity.averageWaitTime);
    $('longest-wait').textContent = duration(activity.longestWaitTime);

    const names = new Map(data.agentsActivity.map((a) => [a.agentId, a.name]));
    const lines = new Map(data.phoneNumbers.map((p) => [p.id, p.displayNumber]));
    const pages = [data.queued, data.offered, data.dialing];
    // ids grow in queue order: oldest first, whatever the status
    const requests = pages.flatMap((page) => page.edges.map((e) => e.node)).sort((a, b) => Number(a.id) - Number(b.id));
    waited = [];
    const rows = requests.map((r) => {
      const tr = document.createElement('tr');
      tr.dataset.callbackId = r.id;
      cell(tr, r.id, 'num');
      cell(tr, r.requesterPhoneNumber);
      cell(tr, lines.get(r.phoneNumberId) || `#${r.phoneNumberId}`);
      badgeCell(tr, r.status, STATUS[r.status]);
      if (r.agentId) cell(tr, names.get(r.agentId) || `Agent #${r.agentId}`);
      else cell(tr, NONE, 'muted');
      cell(tr, r.queuePosition == null ? NONE : String(r.queuePosition), 'num');
      cell(tr, r.estimatedWaitTime == null ? NONE : duration(r.estimatedWaitTime), 'num');
      waited.push({ td: cell(tr, '', 'num'), since: Date.parse(r.createdAt) });
      return tr;
    });
    $('callbacks').tBodies[0].replaceChildren(...(rows.length > 0 ? rows : [emptyRow(8, 'No callbacks are waiting.')]));
    tick();
    const total = pages.reduce((n, page) => n + page.totalCount, 0);
    const more = $('callbacks-more');
    more.hidden = total <= requests.length;
    more.textContent = `Showing ${requests.length} of ${total}: the first 100 of each status.`;

    const agents = data.agentsActivity.map((a) => {
      const tr = document.createElement('tr');
      tr.dataset.agentId = a.agentId;
      cell(tr, a.name);
      badgeCell(tr, a.agentState, AGENT_STATE[a.agentState]);
      badgeCell(tr, a.callStatus, CALL_STATUS[a.callStatus]);
      cell(tr, String(a.callsAccepted), 'num');
      cell(tr, String(a.callsMissed), 'num');
      cell(tr, String(a.callbacksCompleted), 'num');
      return tr;
    });
    $('agents').tBodies[0].replaceChildren(...(agents.length > 0 ? agents : [emptyRow(6, 'No agents yet.')]));
    $('updated').textContent = `Updated at ${new Date().toLocaleTimeString()}.`;
  }

  /** The "Waited" column counts on between queries. */
  function tick() {
    const now = Date.now() + skew;
    for (const w of waited) w.td.textContent = duration((now - w.since) / 1000);
  }

  function boardError(message) {
    const p = $('board-error');
    p.hidden = !message;
    p.textContent = message || '';
  }

  function setLive(state, text) {
    const p = $('live');
    p.dataset.state = state;
    p.textContent = text;
  }

  // ---- reading ----------------------------------------------------------------------

  /** One run of the query: 'ok', 'unauthenticated', 'forbidden' or 'error' (shown, retried later). */
  async function load() {
    let res;
    try {
      res = await fetch(GRAPHQL_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: QUERY, operationName: 'VoiceQueue' }),
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch {
      boardError('The server cannot be reached. The page tries again.');
      return 'error';
    }
    let body = null;
    try {
      body = await res.json();
    } catch {
      // not JSON (a proxy's error page): told below by its status
    }
    const errors = (body && body.errors) || [];
    const codes = errors.map((e) => e.extensions && e.extensions.code);
    if (res.status === 401 || codes.includes('UNAUTHENTICATED')) return 'unauthenticated';
    if (res.status === 403 || codes.includes('FORBIDDEN')) return 'forbidden';
    if (!body || !body.data) {
      boardError(`The queue could not be read: ${errors[0] ? errors[0].message : `HTTP ${res.status}`}. The page tries again.`);
      return 'error';
    }
    const serverNow = Date.parse(res.headers.get('date') || '');
    if (!Number.isNaN(serverNow)) {
      const difference = serverNow - Date.now();
      skew = Math.abs(difference) > 2000 ? difference : 0;
    }
    boardError('');
    render(body.data);
    return 'ok';
  }

  const REFUSED = {
    unauthenticated: 'This token was not accepted: it may be mistyped, expired or revoked.',
    forbidden: 'This token may not read the queue: it needs an admin or agent, and the read scope.',
  };

  /** Runs the query, or once more after the one under way when it is running. */
  function refresh() {
    if (!token) return Promise.resolve('signed-out');
    if (running) {
      again = true;
      return running;
    }
    running = load()
      .then((result) => {
        if (REFUSED[result]) signOut(REFUSED[result]);
        return result;
      })
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          refresh();
        }
      });
    return running;
  }

  /** An event: a query soon, one for all the events of the next moments. */
  function soon() {
    if (soonTimer) return;
    soonTimer = setTimeout(() => {
      soonTimer = null;
      refresh();
    }, COALESCE_MS);
  }

  // ---- live updates -----------------------------------------------------------------

  function startLive() {
    stopLive();
    const client = graphqlWs.createClient({
      url: WS_URL,
      connectionParams: () => ({ authorization: `Bearer ${token}` }),
      // reconnect for as long as the page is open (a restart, a network change), at most 30 s apart;
      // graphql-ws itself gives up on the fatal closes (4401 credentials refused, 4400, 4500…)
      retryAttempts: Infinity,
      shouldRetry: () => true,
      retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, Math.min(30, 2 ** retries) * 1000 + Math.random() * 1000)),
      on: {
        connecting: () => live === client && setLive('connecting', 'Connecting…'),
        // (re)connected: what happened while the socket was down is read again
        connected: () => {
          if (live !== client) return;
          setLive('live', 'Live');
          refresh();
        },
        closed: () => live === client && setLive('connecting', 'Reconnecting…'),
      },
    });
    live = client;
    const sink = { next: soon, error: (err) => liveFailed(client, err), complete: () => {} };
    for (const query of SUBSCRIPTIONS) client.subscribe({ query }, sink);
  }

  function stopLive() {
    const client = live;
    live = null;
    if (client) client.dispose();
  }

  /** The server ended the subscriptions for good: refused credentials, or an error. */
  function liveFailed(client, err) {
    if (live !== client) return;
    stopLive();
    const code = err && typeof err.code === 'number' ? err.code : undefined;
    if (code === 4401) return signOut(REFUSED.unauthenticated);
    if (code === 4403) return signOut(REFUSED.forbidden);
    const message = Array.isArray(err) && err[0] ? err[0].message : code ? `${code} ${err.reason || ''}`.trim() : String(err);
    setLive('down', 'Not live');
    boardError(`Live updates stopped (${message}). Reload the page to start them again.`);
  }

  // ---- signing in and out -----------------------------------------------------------

  function signIn(value) {
    token = value;
    store(value);
    $('sign-in').hidden = true;
    $('board').hidden = false;
    $('sign-out').hidden = false;
    setLive('connecting', 'Connecting…');
    refresh().then((result) => {
      if (result === 'ok' || result === 'error') startLive();
    });
  }

  function signOut(message) {
    token = null;
    store(null);
    stopLive();
    waited = [];
    for (const id of ['callbacks', 'agents']) $(id).tBodies[0].replaceChildren();
    boardError('');
    $('board').hidden = true;
    $('sign-out').hidden = true;
    $('sign-in').hidden = false;
    const error = $('sign-in-error');
    error.hidden = !message;
    error.textContent = message || '';
    setLive('off', 'Not connected');
    $('token').focus();
  }

  $('sign-in-form').addEventListener('submit', (event) => {
    // never submitted: the token would land in a URL (the page's policy forbids it anyway: form-action 'none')
    event.preventDefault();
    const input = $('token');
    const value = input.value.trim().replace(/^Bearer\s+/i, '');
    if (!value) {
      const error = $('sign-in-error');
      error.hidden = false;
      error.textContent = 'Enter an API token.';
      input.focus();
      return;
    }
    input.value = '';
    signIn(value);
  });
  $('sign-out').addEventListener('click', () => signOut(''));

  setInterval(tick, 1000);
  setInterval(() => {
    if (token && !document.hidden) refresh();
  }, REFRESH_MS);

  if (token) signIn(token);
  else signOut('');
})();
