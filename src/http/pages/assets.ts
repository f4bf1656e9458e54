import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { documentHead, escapeHtml } from './templates';

// The static files of the browser pages (/graphiql, /voice/queue): read once at start,
// served under URLs that change whenever their bytes do (a package's version, or a hash of
// the content), so that they can be cached for a year and a new release is still seen at once.

export const JS = 'text/javascript; charset=utf-8';
export const CSS = 'text/css; charset=utf-8';

/** The headers of such a page: never cached itself, never framed, its policy `csp`. */
export function pageHeaders(csp: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    // the page names its assets by version or content hash: a new release is seen at once
    'cache-control': 'no-store',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/** Versioned or content-addressed: the same URL always has the same bytes. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

export interface Asset {
  /** relative to the page (the folder `dir` given below, e.g. graphiql/assets/…) */
  href: string;
  type: string;
  body: Buffer;
}

/** A file of an installed package (found by its package.json), under a URL that carries the package's version. */
export function packageFile(dir: string, manifest: string, file: string, type: string): Asset {
  const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; version: string };
  return { href: `${dir}/${name}@${version}/${path.basename(file)}`, type, body: readFileSync(path.join(path.dirname(manifest), file)) };
}

/** Text of this project, under a URL that carries a hash of its content. */
export function ownFile(dir: string, name: string, extension: string, type: string, text: string): Asset {
  const body = Buffer.from(text, 'utf8');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { href: `${dir}/${name}.${hash}.${extension}`, type, body };
}

/** GET <folder><href> for each asset (`folder`: the page's own folder, e.g. / for /graphiql), with its content type and the long cache. */
export function serveAssets(fastify: FastifyInstance, folder: string, assets: Asset[]): void {
  for (const asset of assets) {
    fastify.get(`${folder}${asset.href}`, async (_request, reply) =>
      reply.headers({ 'content-type': asset.type, 'cache-control': ASSET_CACHE, 'x-content-type-options': 'nosniff' }).send(asset.body),
    );
  }
}

/** A page's HTML up to its <body>: its title, and its style sheets (URLs relative to the page). */
export function pageHead(title: string, styles: string[]): string {
  const links = styles.map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`).join('\n');
  return documentHead(title, `<link rel="icon" href="data:,">\n${links}`);
}

/** <script> elements for these URLs (relative to the page), in order: no inline script. */
export function scriptTags(scripts: string[]): string {
  return scripts.map((src) => `<script src="${escapeHtml(src)}"></script>`).join('\n');
}
