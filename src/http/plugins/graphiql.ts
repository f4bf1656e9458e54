import type { FastifyInstance } from 'fastify';
import { EXAMPLE_DOCUMENT, EXAMPLE_HEADERS, TOKEN_PLACEHOLDER } from '../../graphql/example-document';
import { CSS, JS, ownFile, packageFile, pageHeaders, serveAssets } from '../pages/assets';
import { graphiqlHtml, graphiqlStartScript, PAGE_CSS } from '../pages/graphiql-page';

// GET /graphiql: GraphiQL served from the installed packages (graphiql's UMD bundle over
// React's UMD builds), for a machine without internet access, where Apollo Sandbox (a
// CDN page) stays blank. The files are read once, here; every request they answer is
// public, like the Sandbox page: the queries go to /graphql with the headers the person
// enters. app.ts registers it only when introspection is on (docs/api.md, "GraphQL").

const GRAPHIQL_PATH = '/graphiql';
const ASSETS = 'graphiql/assets';

/**
 * Scripts from this server only (no inline script), requests to this server only, never
 * in a frame. Inline styles are allowed: GraphiQL's dialogs (settings, short keys) insert
 * a <style> element whose text varies, so no hash would do; its style sheet carries its
 * fonts and icons as data: URLs.
 */
const GRAPHIQL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  // 'self' covers ws: and wss: to this host as well (CSP Level 3: Chromium, Firefox, Safari 15.4+): GraphiQL's subscriptions
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = pageHeaders(GRAPHIQL_CSP);

export async function graphiql(fastify: FastifyInstance): Promise<void> {
  // by package.json: the packages' "exports" do not list their browser bundles
  const graphiqlManifest = require.resolve('graphiql/package.json');
  const styles = [packageFile(ASSETS, graphiqlManifest, 'graphiql.min.css', CSS), ownFile(ASSETS, 'page', 'css', CSS, PAGE_CSS)];
  const start = graphiqlStartScript({
    endpoint: 'graphql',
    document: EXAMPLE_DOCUMENT,
    headers: JSON.stringify(EXAMPLE_HEADERS, null, 2),
    placeholder: TOKEN_PLACEHOLDER,
  });
  const scripts = [
    packageFile(ASSETS, require.resolve('react/package.json'), 'umd/react.production.min.js', JS),
    packageFile(ASSETS, require.resolve('react-dom/package.json'), 'umd/react-dom.production.min.js', JS),
    packageFile(ASSETS, graphiqlManifest, 'graphiql.min.js', JS),
    // subscriptions: graphql-ws's browser build (global graphqlWs)
    packageFile(ASSETS, require.resolve('graphql-ws/package.json'), 'umd/graphql-ws.min.js', JS),
    ownFile(ASSETS, 'start', 'js', JS, start),
  ];
  const html = graphiqlHtml({ styles: styles.map((a) => a.href), scripts: scripts.map((a) => a.href) });

  fastify.get(GRAPHIQL_PATH, async (_request, reply) => reply.headers(PAGE_HEADERS).send(html));
  serveAssets(fastify, '/', [...styles, ...scripts]);
}
