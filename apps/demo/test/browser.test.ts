/**
 * The demo page and the SDK in a real browser (Debian's Chromium, headless) against a real
 * embedded server: two users chat with live pushes, receipts, recall and groups; a page that
 * goes offline catches up by its max seq with nothing lost or doubled; a send whose reply is
 * lost is resent and stored once; tokens travel in the query string; a foreign origin is
 * refused. A failed test leaves screenshots in artifacts/.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { chromiumMissing, launchChromium, mustRunInCi, screenshots } from './support/chromium.ts';
import { DemoPage } from './support/demo-page.ts';
import { startPageServer } from './support/page-server.ts';
import { startDemoServer, type DemoServer } from './support/server.ts';
import { freePort } from '../../server/test/child-server.ts';
import { sdkPageChecks } from './support/sdk-page.ts';

if (chromiumMissing !== null) {
  if (mustRunInCi) {
    describe('browser suite', () => {
      it('needs Chromium (CI=true)', () => {
        throw new Error(chromiumMissing ?? '');
      });
    });
  } else {
    console.log(`[seqline tests] browser suite skipped: ${chromiumMissing}`);
  }
}

const tokenUser = (url: string): string | undefined => {
  const token = new URL(url).searchParams.get('token');
  const payload = token?.split('.')[1];
  return payload === undefined ? undefined : (JSON.parse(Buffer.from(payload, 'base64url').toString()) as { sub?: string }).sub;
};

describe.skipIf(chromiumMissing !== null)('demo page and SDK in Chromium', () => {
  let browser: Browser;
  let demo: DemoServer;
  let pages: DemoPage[] = [];
  const open = async (label: string) => {
    const page = await DemoPage.open(browser, `${demo.origin}/`, label);
    pages.push(page);
    return page;
  };

  beforeAll(async () => {
    [browser, demo] = await Promise.all([launchChromium(), startDemoServer()]);
  }, 60_000);

  afterEach(async ({ task }) => {
    if (task.result?.state === 'fail') {
      const saved = await screenshots(
        task.name,
        pages.map((p) => ({ label: p.label, page: p.page })),
      );
      for (const path of saved) console.log(`[browser suite] screenshot of the failed test: ${path}`);
      for (const p of pages) if (p.errors.length > 0) console.log(`[browser suite] ${p.label} page errors: ${p.errors.join('\n')}`);
    }
    for (const page of pages) expect(page.errors, `${page.label}: uncaught errors in the page`).toEqual([]);
    await Promise.all(pages.map((p) => p.close()));
    pages = [];
  });

  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
  });

  it('two users chat: live pushes, read receipts, recall; the token travels in the query string', async () => {
    const [alice, bob] = await Promise.all([open('alice'), open('bob')]);
    await Promise.all([alice.signIn('alice1'), bob.signIn('bob1')]);
    for (const [page, user] of [
      [alice, 'alice1'],
      [bob, 'bob1'],
    ] as const) {
      expect(page.tap.urls.length).toBeGreaterThan(0);
      for (const url of page.tap.urls) {
        expect(new URL(url).pathname).toBe('/v1/ws');
        expect(tokenUser(url)).toBe(user);
      }
    }

    await alice.openChat('bob1');
    await alice.send('hello bob');
    await bob.select('user:alice1'); // arrived by push: bob never reloaded
    await bob.waitTexts(['hello bob']);
    // Shown to bob = read by bob: alice's copy gets a receipt.
    await alice.page.waitForSelector('.msg.mine .read-by:has-text("read by bob1")', { timeout: 15_000 });

    await bob.send('hi alice');
    await alice.waitTexts(['hello bob', 'hi alice']);

    await alice.page.click('.msg.mine:has-text("hello bob") button.recall');
    await bob.waitTexts(['message recalled', 'hi alice']);
    await alice.waitTexts(['message recalled', 'hi alice']);
  }, 45_000);

  it('groups: created with members, a message to the group reaches them, receipts come back', async () => {
    const [alice, bob] = await Promise.all([open('alice'), open('bob')]);
    await Promise.all([alice.signIn('alice2'), bob.signIn('bob2')]);
    const group = await alice.createGroup('team', ['bob2']);
    expect(group).not.toBe('');
    await alice.send('hi team');
    // bob's page never saw the name typed: the list names the group by the server's title, not its id.
    await bob.page.waitForSelector(`#convs button[data-conv="group:${group}"]:has-text("# team")`, { timeout: 15_000 });
    await bob.select(`group:${group}`);
    await bob.waitTexts(['hi team']);
    await bob.send('hi alice, from the group');
    await alice.waitTexts(['hi team', 'hi alice, from the group']);
    await alice.page.waitForSelector('.msg.mine .read-by:has-text("read by bob2")', { timeout: 15_000 });
  }, 45_000);

  it('a page that goes offline misses messages, then catches up by its max seq: nothing lost, nothing doubled', async () => {
    const [alice, bob] = await Promise.all([open('alice'), open('bob')]);
    await Promise.all([alice.signIn('alice3'), bob.signIn('bob3')]);
    await alice.openChat('bob3');
    await alice.send('m0');
    await bob.select('user:alice3');
    await bob.waitTexts(['m0']);

    // Offline: the browser refuses new connections and the open one is cut.
    await bob.context.setOffline(true);
    bob.tap.offline = true;
    bob.tap.cut();
    await bob.waitState('disconnected');
    const maxSeqOffline = await bob.maxSeq();
    const sentBefore = bob.tap.sent.length;

    const missed = ['m1', 'm2', 'm3', 'm4', 'm5'];
    for (const text of missed) await alice.send(text);
    expect(await bob.texts()).toEqual(['m0']);

    await bob.context.setOffline(false);
    bob.tap.offline = false;
    await bob.waitState('connected');
    await bob.waitTexts(['m0', ...missed]);
    // The catch-up asked for what follows the max seq it had, not for everything.
    const firstSync = bob.tap.sent.slice(sentBefore).find((f) => f.op === 'sync');
    expect(firstSync?.['maxSeq']).toBe(maxSeqOffline);
    expect(maxSeqOffline).toBeGreaterThan(0);
    const delivered = await bob.delivered();
    expect(new Set(delivered).size).toBe(delivered.length);
    // Showing the messages writes bob's read entry into his inbox, pushed back a moment later: compare once settled.
    const settled = async () => {
      const [seen, inbox] = await Promise.all([bob.delivered(), demo.inbox('bob3')]);
      return { seen, inbox: inbox.map((e) => e.seq) };
    };
    await expect
      .poll(
        async () => {
          const { seen, inbox } = await settled();
          return seen.join() === inbox.join();
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    const { seen, inbox } = await settled();
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(inbox);
  }, 45_000);

  it('a send whose reply is lost with the connection is resent with the same appinfo and stored once', async () => {
    const [alice, bob] = await Promise.all([open('alice'), open('bob')]);
    await Promise.all([alice.signIn('alice4'), bob.signIn('bob4')]);
    await alice.openChat('bob4');
    // The server stores the send, but its reply is lost: the line goes down before it arrives.
    const sendIds = new Set<number>();
    alice.tap.loseReply = (frame) => {
      for (const f of alice.tap.sent) if (f.op === 'send' && typeof f.id === 'number') sendIds.add(f.id);
      return typeof frame.id === 'number' && sendIds.has(frame.id);
    };
    const line = await alice.send('only once');
    expect(line).toContain('resent: already stored once');

    const sends = alice.tap.sent.filter((f) => f.op === 'send');
    expect(sends).toHaveLength(2);
    expect(sends[1]?.['appinfo']).toBe(sends[0]?.['appinfo']);
    await bob.select('user:alice4');
    await bob.waitTexts(['only once']);
    const copies = (await demo.inbox('bob4')).filter((e) => e.kind === 'msg' && e.appinfo === sends[0]?.['appinfo']);
    expect(copies).toHaveLength(1);
    expect((await demo.inbox('alice4')).filter((e) => e.kind === 'msg')).toHaveLength(1);
  }, 45_000);

  it("the list shows the server's unread and @-mention counts; opening a chat reads it on every device; edit, delete-for-me", async () => {
    const [alice, bob] = await Promise.all([open('alice'), open('bob')]);
    await Promise.all([alice.signIn('alice5'), bob.signIn('bob5')]);
    await bob.openChat('alice5');
    await bob.send('one');
    await bob.send('two');
    const group = await bob.createGroup('crew', ['alice5']);
    await bob.send('@alice5 look at this');
    await bob.send('no mention here');
    await alice.waitConv('user:bob5', { unread: 2, mentions: 0 });
    await alice.waitConv(`group:${group}`, { unread: 2, mentions: 1 });
    expect(await alice.convList()).toEqual([`group:${group} 2/1`, 'user:bob5 2/0']); // newest activity first

    await alice.select('user:bob5');
    await alice.waitTexts(['one', 'two']);
    await alice.waitConv('user:bob5', { unread: 0, mentions: 0 });
    await alice.waitConv(`group:${group}`, { unread: 2, mentions: 1 }); // not opened: still unread
    const phone = await open('alice phone'); // another device of alice: the server's counts, not its own
    await phone.signIn('alice5');
    await phone.waitConv('user:bob5', { unread: 0, mentions: 0 });
    await phone.waitConv(`group:${group}`, { unread: 2, mentions: 1 });

    await bob.select('user:alice5');
    await bob.act('two', 'edit');
    await bob.send('two, edited');
    await alice.waitTexts(['one', 'two, edited']);

    await phone.select('user:bob5');
    await phone.waitTexts(['one', 'two, edited']);
    await alice.act('one', 'delete');
    await alice.waitTexts(['two, edited']);
    await phone.waitTexts(['two, edited']); // deleted for alice on every device of hers
    await bob.waitTexts(['one', 'two, edited']); // and only for her
  }, 60_000);

  it("a page of a foreign origin cannot open a socket; the demo's own origin can (SEQLINE_ALLOWED_ORIGINS)", async () => {
    const forbidden = async () =>
      Number(/seqline_gateway_errors_total\{code="FORBIDDEN"\} (\d+)/.exec(await (await fetch(`${demo.origin}/metrics`)).text())?.[1] ?? 0);
    const refusedBefore = await forbidden();
    const token = await demo.token('mallory');
    const foreignSite = await startPageServer(await freePort(), {
      '/': { type: 'text/html', body: '<!doctype html><title>foreign</title>' },
    });
    const context = await browser.newContext();
    const attempt = `new Promise((resolve) => {
      const ws = new WebSocket('ws://127.0.0.1:${demo.port}/v1/ws?token=${token}');
      ws.onopen = () => { ws.close(); resolve('open'); };
      ws.onclose = (e) => resolve('closed ' + e.code);
    })`;
    try {
      const foreign = await context.newPage();
      await foreign.goto(`${foreignSite.origin}/`);
      expect(await foreign.evaluate(attempt)).toBe('closed 1006');

      const own = await context.newPage();
      await own.goto(`${demo.origin}/`);
      expect(await own.evaluate(attempt)).toBe('open');
    } finally {
      await context.close();
      await foreignSite.close();
    }
    expect(await forbidden()).toBe(refusedBefore + 1); // the foreign upgrade, refused by the server
  }, 30_000);

  it('one-per-platform: a second tab of a user signs the first out, which says so and never reconnects', async () => {
    await demo.loginPolicy('one-per-platform');
    try {
      const [first, second] = [await open('tab 1'), await open('tab 2')];
      await first.signIn('erin6');
      await second.signIn('erin6');
      await first.page.waitForSelector('#status:has-text("signed out: erin6 signed in on another web")', { timeout: 15_000 });
      await second.openChat('frank6');
      await second.send('from the newer tab');
      await new Promise((resolve) => setTimeout(resolve, 1500)); // past the SDK's first reconnect delay
      expect(first.tap.urls).toHaveLength(1); // a kicked client that reconnected would kick the newer tab back
      expect(await first.page.textContent('#status')).toBe('signed out: erin6 signed in on another web');
      expect(await second.page.getAttribute('#status', 'data-state')).toBe('connected');
    } finally {
      await demo.loginPolicy(null);
    }
  }, 45_000);

  it('the SDK alone (not the demo) connects, sends, receives a push and syncs in the browser', async () => {
    const results = await sdkPageChecks(browser, demo);
    expect(results.bundleHasNodeImports).toBe(false);
    expect(results.pushed).toEqual(['from the SDK page']);
    expect(results.firstSend.duplicate).toBe(false);
    expect(results.resend).toEqual({ seq: results.firstSend.seq, duplicate: true });
    expect(results.syncedTexts).toEqual(['from the SDK page']);
    expect(results.socketUrls.every((url) => new URL(url).searchParams.has('token'))).toBe(true);
  }, 30_000);
});
