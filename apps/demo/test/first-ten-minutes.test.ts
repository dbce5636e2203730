/**
 * The README's "First ten minutes", run as written. `npm start` from the repo root, with no
 * setting of ours in its environment; the page at the README's URL in Chromium, where two users
 * sign in (two browser contexts) and chat; then the README's curl block, line by line, against
 * the same server; then Ctrl-C. The signed-out page shows the sign-in form alone, and no page
 * load logs a console error or gets an error answer (no 404 favicon).
 *
 * It takes the README's port (8080) and its prestart build rewrites dist/: it runs in the heavy
 * project, one file at a time, and fails with a clear message when something else holds the port.
 * The data is `./data`, as for anyone who runs the README, so it may hold earlier runs' messages:
 * this run's texts carry a run id and the checks look for them, not for a whole history.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing, launchChromium, mustRunInCi } from './support/chromium.ts';
import { codeBlocks, linkedUrls, readmeSection, REPO_ROOT, shellCommands, withoutComment } from './support/readme.ts';
import { portIsFree, runShellBlock, startCommand, type RunningCommand } from './support/shell.ts';
import { iconStatus, openChat, openWatchedPage, send, sessionPartsShown, shows, signIn } from './support/watched-page.ts';

const SECTION = readmeSection('First ten minutes');
const [startBlock, curlBlock] = codeBlocks(SECTION).filter((b) => b.lang === 'bash');
const PAGE_URL = linkedUrls(SECTION)[0] ?? '';
const START =
  shellCommands(startBlock?.code ?? '')
    .map(withoutComment)
    .find((c) => c.startsWith('npm start')) ?? 'npm start';
const DATA_DIR = join(REPO_ROOT, 'data');
const RUN = randomUUID().slice(0, 8);

describe('the README section itself', () => {
  it('has the two commands, the URL, what to type and click, and the curl block', () => {
    expect(shellCommands(startBlock?.code ?? '').map(withoutComment)).toEqual(['npm install', 'npm start']);
    expect(PAGE_URL).toMatch(/^http:\/\/localhost:\d+$/);
    for (const words of ['`alice`', '**Sign in**', '`bob`', '"chat with (user)"', '**Open**']) expect(SECTION).toContain(words);
    const curls = shellCommands(curlBlock?.code ?? '');
    expect(curls.some((c) => c.includes('/dev/token'))).toBe(true);
    expect(curls.some((c) => c.includes('/v1/send'))).toBe(true);
    expect(curls.some((c) => c.includes('/v1/sync'))).toBe(true);
    expect(curls.some((c) => c.includes('/healthz'))).toBe(true);
  });
});

if (chromiumMissing !== null && !mustRunInCi) console.log(`[seqline tests] first-ten-minutes skipped: ${chromiumMissing}`);

describe.skipIf(chromiumMissing !== null && !mustRunInCi)('First ten minutes, as the README says', () => {
  const port = Number(new URL(PAGE_URL).port || 80);
  let server: RunningCommand | undefined;
  let browser: Browser | undefined;
  let dataWasThere = true;

  beforeAll(async () => {
    if (chromiumMissing !== null) throw new Error(chromiumMissing);
    if (!(await portIsFree(port))) {
      throw new Error(`port ${port} (the README's) is in use: stop what listens there (an npm start?) and run again`);
    }
    dataWasThere = existsSync(DATA_DIR);
    // "npm install" ran before the suite (a fresh clone's first command); install-scripts.test.ts checks it.
    server = startCommand(START);
    await server.waitFor(new RegExp(`seqline listening on http://0\\.0\\.0\\.0:${port} `), 420_000);
    browser = await launchChromium();
  }, 480_000);

  afterAll(async () => {
    await browser?.close();
    await server?.interrupt(20_000);
    if (!dataWasThere) await rm(DATA_DIR, { recursive: true, force: true });
  });

  it('the page signs two users in, in two windows, and they chat: live push both ways, a read receipt; no console error, no failed load', async () => {
    if (!browser) throw new Error('no browser');
    const alice = await openWatchedPage(browser, PAGE_URL);
    const bob = await openWatchedPage(browser, PAGE_URL);
    try {
      expect(await alice.page.isVisible('#signin-form')).toBe(true);
      expect(await sessionPartsShown(alice.page)).toEqual([]); // signed out: the sign-in form alone
      expect(await iconStatus(alice.page)).toBe(200); // declared and served: no browser asks for a missing /favicon.ico

      await signIn(alice.page, 'alice');
      await signIn(bob.page, 'bob');
      expect(await alice.page.isVisible('#signin-form')).toBe(false);
      expect(await alice.page.isVisible('#app')).toBe(true);

      await openChat(alice.page, 'bob');
      await send(alice.page, `hello bob (${RUN})`);
      await bob.page.click('#convs button[data-conv="user:alice"]', { timeout: 15_000 }); // arrived by push
      await shows(bob.page, `hello bob (${RUN})`);
      await alice.page.waitForSelector(`.msg.mine:has(.text:text-is("hello bob (${RUN})")) .read-by:has-text("read by bob")`, {
        timeout: 15_000,
      });
      await send(bob.page, `hi alice (${RUN})`);
      await shows(alice.page, `hi alice (${RUN})`);

      expect(alice.problems).toEqual([]);
      expect(bob.problems).toEqual([]);
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  }, 90_000);

  it('the curl block runs as written: two dev tokens, a send over HTTP, bob’s sync shows it, healthz', async () => {
    const code = curlBlock?.code ?? '';
    const commands = shellCommands(code);
    const run = await runShellBlock(code, 60_000);
    expect(run.status, run.stderr).toBe(0);
    expect(run.outputs).toHaveLength(commands.length);
    const outputOf = (path: string) => {
      const index = commands.findIndex((c) => c.includes(path) && !/^[A-Z]+=/.test(c));
      const output = run.outputs[index]?.stdout.trim() ?? '';
      return JSON.parse(output) as Record<string, unknown>;
    };
    // The token lines print nothing: their output went into ALICE and BOB.
    for (const [i, command] of commands.entries()) if (/^[A-Z]+=/.test(command)) expect(run.outputs[i]?.stdout.trim()).toBe('');

    const sent = outputOf('/v1/send');
    expect(sent).toMatchObject({ ok: true, seq: expect.any(Number) as number });
    const appinfo = /"appinfo":"([^"]+)"/.exec(commands.find((c) => c.includes('/v1/send')) ?? '')?.[1];
    const synced = outputOf('/v1/sync') as { ok: boolean; entries: Array<{ appinfo: string; from: string; kind: string }> };
    expect(synced.ok).toBe(true);
    expect(synced.entries.filter((e) => e.kind === 'msg' && e.appinfo === appinfo && e.from === 'alice')).toHaveLength(1);
    expect(outputOf('/healthz')).toEqual({ ok: true });

    // The same block again: the send is a resend now, answered with the same seq.
    const again = await runShellBlock(code, 60_000);
    expect(again.status, again.stderr).toBe(0);
    const resent = JSON.parse(again.outputs[commands.findIndex((c) => c.includes('/v1/send'))]?.stdout.trim() ?? '') as unknown;
    expect(resent).toMatchObject({ ok: true, seq: sent['seq'], duplicate: true });
  }, 150_000);

  it('Ctrl-C stops it: the server shuts down (no failure logged), every process it started exits, the port is free', async () => {
    await server?.interrupt(20_000);
    const output = server?.output() ?? '';
    expect(output).toMatch(/"signal":"SIGINT","msg":"shutting down: finishing in-flight work"/);
    expect(output).not.toMatch(/shutdown failed|"level":50/);
    expect(await portIsFree(port)).toBe(true);
  }, 30_000);
});
