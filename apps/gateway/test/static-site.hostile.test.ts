/**
 * The static site (the embedded server's demo page) is a fixed map of one folder's files:
 * traversal, encoded or normalised paths, subfolders, unknown types and API paths never reach
 * a file; content types are set, HEAD answers carry the GET's headers and no body.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStaticSite, type StaticSite } from '../src/index.ts';
import { startGateway, TRANSPORTS, type Started } from './harness.ts';
import { exchange, request } from './raw-http.ts';

const INDEX = '<!doctype html><title>demo</title><p>héllo</p>';
let dir: string;
let site: StaticSite;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'seqline-site-'));
  await writeFile(join(dir, 'index.html'), INDEX);
  await writeFile(join(dir, 'app.js'), 'console.log(1);');
  await writeFile(join(dir, 'style.css'), 'body{}');
  await writeFile(join(dir, 'secret.env'), 'SEQLINE_SECRET=do-not-serve');
  await writeFile(join(dir, '.hidden.js'), 'hidden');
  await mkdir(join(dir, 'sub'));
  await writeFile(join(dir, 'sub', 'inner.js'), 'inner');
  site = await loadStaticSite(dir);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadStaticSite', () => {
  it("maps the folder's own files of known types, index.html also at /", () => {
    expect([...site.keys()].sort()).toEqual(['/', '/app.js', '/index.html', '/style.css']);
    expect(site.get('/')?.contentType).toBe('text/html; charset=utf-8');
    expect(site.get('/app.js')?.contentType).toBe('text/javascript; charset=utf-8');
  });

  it('throws when the folder is missing (the server then logs and serves none)', async () => {
    await expect(loadStaticSite(join(dir, 'missing'))).rejects.toThrow(/ENOENT/);
  });
});

describe.each(TRANSPORTS)('the site over %s', (transport) => {
  let started: Started;
  const send = (method: string, target: string) =>
    exchange(started.gateway.port, request(method, target), {
      responses: 1,
      quietMs: 50,
      head: method === 'HEAD' ? [0] : [],
    });

  beforeAll(async () => {
    started = await startGateway(transport, { site });
  });
  afterAll(async () => {
    await started.gateway.close();
  });

  it('serves / and /index.html as HTML with a strict policy', async () => {
    for (const path of ['/', '/index.html']) {
      const {
        responses: [reply],
        rest,
      } = await send('GET', path);
      expect(reply?.status).toBe(200);
      expect(reply?.body).toBe(Buffer.from(INDEX).toString('latin1'));
      expect(reply?.header('content-length')).toBe(String(Buffer.byteLength(INDEX)));
      expect(reply?.header('content-type')).toBe('text/html; charset=utf-8');
      expect(reply?.header('content-security-policy')).toContain("script-src 'self'");
      expect(reply?.header('x-content-type-options')).toBe('nosniff');
      expect(rest).toBe('');
    }
    const {
      responses: [js],
    } = await send('GET', '/app.js');
    expect(js?.header('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js?.body).toBe('console.log(1);');
  });

  it("answers HEAD with the GET's headers and no body", async () => {
    const {
      responses: [get],
    } = await send('GET', '/style.css');
    const {
      responses: [head],
      rest,
    } = await send('HEAD', '/style.css');
    expect(head?.status).toBe(200);
    expect(head?.body).toBe('');
    expect(rest).toBe(''); // a body after a HEAD answer would show up here
    expect(head?.header('content-length')).toBe(get?.header('content-length'));
    expect(head?.header('content-type')).toBe(get?.header('content-type'));
  });

  it('refuses other methods with 405 and Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const {
        responses: [reply],
      } = await exchange(started.gateway.port, request(method, '/', [['Content-Length', '0']]), { responses: 1, quietMs: 50 });
      expect(reply?.status, method).toBe(405);
      expect(reply?.header('allow')).toBe('GET, HEAD');
    }
  });

  it('serves nothing outside the map: traversal, encodings, subfolders, other types, hidden files', async () => {
    const paths = [
      '/../index.html',
      '/..%2findex.html',
      '/%2e%2e/etc/passwd',
      '/secret.env',
      '/sub/inner.js',
      '/sub/',
      '//app.js',
      '/app.js/',
      '/APP.JS',
      '/app.js%00',
      '/app%2ejs',
      '/.hidden.js',
      '/index.html/..',
      '/./app.js',
      '/%2F',
      '/etc/passwd',
    ];
    for (const path of paths) {
      const {
        responses: [reply],
      } = await send('GET', path);
      expect(reply?.status, path).toBe(404);
      expect(reply?.body, path).not.toContain('do-not-serve');
    }
  });

  it('leaves the API routes as they were', async () => {
    const {
      responses: [health],
    } = await send('GET', '/healthz');
    expect(health?.status).toBe(200);
    expect(JSON.parse(health?.body ?? '')).toEqual({ ok: true });
    const {
      responses: [ws],
    } = await send('GET', '/v1/ws');
    expect(ws?.status).toBe(426);
  });
});
