/**
 * The SDK alone in the browser: `@seqline/client` bundled for browsers (an IIFE exposing
 * `SeqlineSDK`), loaded by a bare page on the server's origin — no demo code involved.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { bundleForBrowser } from '../../build.ts';
import { startPageServer } from './page-server.ts';
import type { DemoServer } from './server.ts';

const SDK_ENTRY = fileURLToPath(new URL('../../../../libs/client/src/index.ts', import.meta.url));

export interface SdkPageResults {
  bundleHasNodeImports: boolean;
  firstSend: { seq: number; duplicate: boolean };
  resend: { seq: number; duplicate: boolean };
  pushed: string[];
  syncedTexts: string[];
  socketUrls: string[];
}

async function sdkBundle(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'seqline-sdk-bundle-'));
  try {
    await bundleForBrowser(SDK_ENTRY, join(dir, 'sdk.js'), 'iife', 'SeqlineSDK');
    return await readFile(join(dir, 'sdk.js'), 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs in the page: two SDK clients, a send, its resend, a push and a sync. */
const SCENARIO = `(async ({ url, tokenA, tokenB }) => {
  const { SeqlineClient } = window.SeqlineSDK;
  const a = new SeqlineClient({ url, token: tokenA });
  const b = new SeqlineClient({ url, token: tokenB });
  const pushed = [];
  b.on('entries', (entries) => { for (const e of entries) if (e.kind === 'msg') pushed.push(e.body.text); });
  await a.connect();
  await b.connect();
  const args = { to: { user: 'sdk-b' }, type: 'text', body: { text: 'from the SDK page' }, appinfo: 'sdk-page-1' };
  const first = await a.send(args);
  const again = await a.send(args);
  for (let i = 0; i < 100 && pushed.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  const synced = await b.sync(0);
  a.close();
  b.close();
  return {
    firstSend: { seq: first.seq, duplicate: first.duplicate }, resend: { seq: again.seq, duplicate: again.duplicate },
    pushed, syncedTexts: synced.entries.filter((e) => e.kind === 'msg').map((e) => e.body.text),
  };
})`;

export async function sdkPageChecks(browser: Browser, demo: DemoServer): Promise<SdkPageResults> {
  const bundle = await sdkBundle();
  // Its own origin (allowed by the server's SEQLINE_ALLOWED_ORIGINS), not the demo's.
  const site = await startPageServer(demo.sdkPagePort, {
    '/': { type: 'text/html', body: '<!doctype html><title>SDK</title><script src="/sdk.js"></script>' },
    '/sdk.js': { type: 'text/javascript', body: bundle },
  });
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const socketUrls: string[] = [];
    page.on('websocket', (ws) => socketUrls.push(ws.url()));
    await page.goto(`${site.origin}/`);
    const [tokenA, tokenB] = await Promise.all([demo.token('sdk-a'), demo.token('sdk-b')]);
    const results = await page.evaluate<Omit<SdkPageResults, 'bundleHasNodeImports' | 'socketUrls'>>(
      `${SCENARIO}(${JSON.stringify({ url: `ws://127.0.0.1:${demo.port}`, tokenA, tokenB })})`,
    );
    return { ...results, socketUrls, bundleHasNodeImports: /(?:from\s*|import\s*\(\s*|require\s*\(\s*)["']node:/.test(bundle) };
  } finally {
    await context.close();
    await site.close();
  }
}
