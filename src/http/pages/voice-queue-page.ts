import { pageHead, scriptTags } from './assets';

// The HTML of the live queue page at /voice/queue: a fixed shell (the sign-in form, the
// queue activity, the two tables), filled in the browser by voice-queue/voice-queue.js
// from /graphql. No data and no credentials are in the HTML itself: the page is the same
// for everyone, and public. No inline script nor style, so that the page's
// Content-Security-Policy allows scripts and styles from this server only. Asset URLs
// are relative to /voice/queue, so that the page also works behind a proxy that adds a
// path prefix.

/** The URLs (relative to the page) of what the page loads, in order. */
export interface VoiceQueuePageAssets {
  styles: string[];
  scripts: string[];
}

const VOICE_QUEUE_TITLE = 'Voice queue: callbacks and agents, live';

const th = (label: string, numeric = false) => `<th scope="col"${numeric ? ' class="num"' : ''}>${label}</th>`;

export function voiceQueueHtml(assets: VoiceQueuePageAssets): string {
  return `${pageHead(VOICE_QUEUE_TITLE, assets.styles)}
<body>
<header class="top">
<h1>Voice queue</h1>
<p id="live" class="live" data-state="off" role="status">Not connected</p>
<button id="sign-out" class="secondary" type="button" hidden>Sign out</button>
</header>
<main>
<noscript><p class="error">This page needs JavaScript.</p></noscript>

<section id="sign-in" class="panel narrow" aria-labelledby="sign-in-title" hidden>
<h2 id="sign-in-title">Sign in</h2>
<form id="sign-in-form" autocomplete="off" novalidate>
<label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="off" spellcheck="false" aria-describedby="token-help">
<p id="token-help" class="help">An OAuth access token of an admin or agent, with the <code>read</code> scope.
It is kept in this browser tab only (sessionStorage) and sent to this server only.</p>
<p id="sign-in-error" class="error" role="alert" hidden></p>
<button class="primary" type="submit">Show the queue</button>
</form>
</section>

<div id="board" hidden>
<section class="panel" aria-labelledby="activity-title">
<h2 id="activity-title">Queue activity</h2>
<dl class="stats">
<div><dt>Agents online</dt><dd id="agents-online">–</dd></div>
<div><dt>Callbacks waiting</dt><dd id="callbacks-waiting">–</dd></div>
<div><dt>Average wait</dt><dd id="average-wait">–</dd></div>
<div><dt>Longest wait</dt><dd id="longest-wait">–</dd></div>
</dl>
</section>

<section class="panel" aria-labelledby="callbacks-title">
<h2 id="callbacks-title">Callbacks waiting, offered and dialing</h2>
<div class="scroll">
<table id="callbacks" aria-labelledby="callbacks-title">
<thead><tr>${th('ID', true)}${th('Requester')}${th('Line')}${th('Status')}${th('Agent')}${th('Position', true)}${th('Estimated wait', true)}${th('Waited', true)}</tr></thead>
<tbody></tbody>
</table>
</div>
<p id="callbacks-more" class="help" hidden></p>
</section>

<section class="panel" aria-labelledby="agents-title">
<h2 id="agents-title">Agents</h2>
<div class="scroll">
<table id="agents" aria-labelledby="agents-title">
<thead><tr>${th('Name')}${th('State')}${th('Call status')}${th('Accepted', true)}${th('Missed', true)}${th('Completed', true)}</tr></thead>
<tbody></tbody>
</table>
</div>
</section>

<p id="board-error" class="error" role="alert" hidden></p>
<p id="updated" class="help"></p>
</div>
</main>
${scriptTags(assets.scripts)}
</body>
</html>
`;
}
