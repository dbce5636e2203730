/**
 * A small static site (the embedded server's demo page) served from a fixed map built once at
 * start: the regular files directly in one folder, with a known text type. A request path is
 * looked up in the map, never joined to a file path, so no request can reach another file.
 */
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { HttpReply } from './transport/transport.ts';

export interface StaticFile {
  contentType: string;
  body: string;
}

/** URL path (e.g. `/app.js`; `/` is index.html) → file. */
export type StaticSite = ReadonlyMap<string, StaticFile>;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/**
 * The page and its scripts: same-origin only, no inline script or style, no framing. The socket
 * is same-origin too (CSP 3: 'self' covers ws: and wss: of the same host).
 */
const HTML_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Reads `dir` once. Throws when it cannot be read (ENOENT: the site was not built). */
export async function loadStaticSite(dir: string): Promise<StaticSite> {
  const site = new Map<string, StaticFile>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const contentType = CONTENT_TYPES[extname(entry.name).toLowerCase()];
    if (!entry.isFile() || !FILE_NAME.test(entry.name) || contentType === undefined) continue;
    const file = { contentType, body: await readFile(join(dir, entry.name), 'utf8') };
    site.set(`/${entry.name}`, file);
    if (entry.name === 'index.html') site.set('/', file);
  }
  return site;
}

/** A GET (or HEAD: the transport drops the body) of one of the site's files. */
export function staticReply(file: StaticFile): HttpReply {
  const headers: Record<string, string> = {
    'content-type': file.contentType,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
  if (file.contentType.startsWith('text/html')) {
    headers['content-security-policy'] = HTML_POLICY;
    headers['x-frame-options'] = 'DENY';
  }
  return { status: 200, headers, body: file.body };
}
