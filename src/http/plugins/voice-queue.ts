import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PROJECT_ROOT } from '../../project-root';
import { CSS, JS, ownFile, packageFile, pageHeaders, serveAssets } from '../pages/assets';
import { voiceQueueHtml } from '../pages/voice-queue-page';

// GET /voice/queue: the live queue page (docs/api.md, "The live queue page"): waiting,
// offered and dialing callbacks and the agents, as they change. The HTML and its files are
// public and the same for everyone; the data is not in them: the page asks the person for
// an API token and reads /graphql with it (a query, and subscriptions over WebSocket on the
// same path), so the API's authentication, roles and scopes decide what it shows.
//
// Its script and style sheet are plain files beside the page's template (no build step),
// read once, here, and served under content-hashed URLs; graphql-ws's browser build comes
// from the installed package, as /graphiql serves it. Unlike /graphiql it does not depend
// on introspection: it runs fixed operations.

const PAGE_PATH = '/voice/queue';
/** relative to the page: /voice/queue/assets/… */
const ASSETS = 'queue/assets';
const SOURCES = path.join(PROJECT_ROOT, 'src', 'http', 'pages', 'voice-queue');

/**
 * Scripts, styles and requests of this server only, no inline script nor style, never in
 * a frame. connect-src 'self' covers ws: and wss: to this host as well (CSP Level 3:
 * Chromium, Firefox, Safari 15.4+): the subscriptions. form-action 'none': the sign-in
 * form is never submitted (its script reads it), so a token can never end up in a URL.
 */
const VOICE_QUEUE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const own = (file: string, type: string) => {
  const [name, extension] = file.split('.');
  return ownFile(ASSETS, name, extension, type, readFileSync(path.join(SOURCES, file), 'utf8'));
};

export async function voiceQueue(fastify: FastifyInstance): Promise<void> {
  const styles = [own('voice-queue.css', CSS)];
  const scripts = [
    // (by package.json: the package's "exports" do not list its browser build) the global graphqlWs
    packageFile(ASSETS, require.resolve('graphql-ws/package.json'), 'umd/graphql-ws.min.js', JS),
    own('voice-queue.js', JS),
  ];
  const html = voiceQueueHtml({ styles: styles.map((a) => a.href), scripts: scripts.map((a) => a.href) });
  const headers = pageHeaders(VOICE_QUEUE_CSP);

  fastify.get(PAGE_PATH, async (_request, reply) => reply.headers(headers).send(html));
  serveAssets(fastify, '/voice/', [...styles, ...scripts]);
}
