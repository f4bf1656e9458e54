import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { EXAMPLE_DOCUMENT, EXAMPLE_HEADERS, TOKEN_PLACEHOLDER } from '../../graphql/example-document';
import { graphiqlHtml, graphiqlStartScript, PAGE_CSS } from '../pages/graphiql-page';

// GET /graphiql: GraphiQL served from the installed packages (graphiql's UMD bundle over
// React's UMD builds), for a machine without internet access, where Apollo Sandbox (a
// CDN page) stays blank. The files are read once, here; every request they answer is
// public, like the Sandbox page: the queries go to /graphql with the headers the person
// enters. app.ts registers it only when introspection is on (docs/api.md, "GraphQL").

const GRAPHIQL_PATH = '/graphiql';
const ASSETS = 'graphiql/assets';

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

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

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  // the page names its assets by version or content hash: a new release is seen at once
  'cache-control': 'no-store',
  'content-security-policy': GRAPHIQL_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Versioned or content-addressed: the same URL always has the same bytes. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

interface Asset {
  /** relative to the page */
  href: string;
  type: string;
  body: Buffer;
}

/** A file of an installed package (found by its package.json), under a URL that carries the package's version. */
function packageFile(manifest: string, file: string, type: string): Asset {
  const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; version: string };
  return { href: `${ASSETS}/${name}@${version}/${path.basename(file)}`, type, body: readFileSync(path.join(path.dirname(manifest), file)) };
}

/** Text made here, under a URL that carries a hash of its content. */
function ownFile(name: string, extension: string, type: string, text: string): Asset {
  const body = Buffer.from(text, 'utf8');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { href: `${ASSETS}/${name}.${hash}.${extension}`, type, body };
}

export async function graphiql(fastify: FastifyInstance): Promise<void> {
  // by package.json: the packages' "exports" do not list their browser bundles
  const graphiqlManifest = require.resolve('graphiql/package.json');
  const styles = [packageFile(graphiqlManifest, 'graphiql.min.css', CSS), ownFile('page', 'css', CSS, PAGE_CSS)];
  const start = graphiqlStartScript({
    endpoint: 'graphql',
    document: EXAMPLE_DOCUMENT,
    headers: JSON.stringify(EXAMPLE_HEADERS, null, 2),
    placeholder: TOKEN_PLACEHOLDER,
  });
  const scripts = [
    packageFile(require.resolve('react/package.json'), 'umd/react.production.min.js', JS),
    packageFile(require.resolve('react-dom/package.json'), 'umd/react-dom.production.min.js', JS),
    packageFile(graphiqlManifest, 'graphiql.min.js', JS),
    // subscriptions: graphql-ws's browser build (global graphqlWs)
    packageFile(require.resolve('graphql-ws/package.json'), 'umd/graphql-ws.min.js', JS),
    ownFile('start', 'js', JS, start),
  ];
  const html = graphiqlHtml({ styles: styles.map((a) => a.href), scripts: scripts.map((a) => a.href) });

  fastify.get(GRAPHIQL_PATH, async (_request, reply) => reply.headers(PAGE_HEADERS).send(html));
  for (const asset of [...styles, ...scripts]) {
    fastify.get(`/${asset.href}`, async (_request, reply) =>
      reply.headers({ 'content-type': asset.type, 'cache-control': ASSET_CACHE, 'x-content-type-options': 'nosniff' }).send(asset.body),
    );
  }
}
