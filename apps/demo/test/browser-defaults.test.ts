/**
 * The demo page against a server started with the defaults `npm start` has — no
 * SEQLINE_ALLOWED_ORIGINS — in Chromium: the page's own origin signs in and chats (it used to be
 * refused with "origin not allowed"), a page of another origin cannot open a socket; signed out,
 * the page shows its sign-in form alone; loading it logs no console error and gets no error
 * answer (no 404 for a favicon). The README's whole path, `npm start` included, is
 * first-ten-minutes.test.ts; this is the quick version the unit project runs.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/test/child-server.ts';
import { chromiumMissing, launchChromium, mustRunInCi } from './support/chromium.ts';
import { startPageServer } from './support/page-server.ts';
import { startDemoServer, type DemoServer } from './support/server.ts';
import { iconStatus, openChat, openWatchedPage, send, sessionPartsShown, shows, signIn } from './support/watched-page.ts';

// Without Chromium this file skips, except under CI=true, where launching fails the suite: the
// one browser check of the defaults a newcomer gets can never be skipped in CI.
describe.skipIf(chromiumMissing !== null && !mustRunInCi)('the demo page with SEQLINE_ALLOWED_ORIGINS unset, in Chromium', () => {
  let browser: Browser;
  let demo: DemoServer;

  beforeAll(async () => {
    [browser, demo] = await Promise.all([launchChromium(), startDemoServer({ SEQLINE_ALLOWED_ORIGINS: undefined })]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.stop();
  });

  it('signed out, the page shows the sign-in form alone; it loads with no console error and no error answer', async () => {
    const visitor = await openWatchedPage(browser, `${demo.origin}/`);
    try {
      expect(await visitor.page.isVisible('#signin-form')).toBe(true);
      expect(await sessionPartsShown(visitor.page)).toEqual([]);
      expect(await iconStatus(visitor.page)).toBe(200);
      await signIn(visitor.page, 'walt');
      await visitor.page.getByRole('button', { name: 'Sign out' }).click();
      await visitor.page.waitForSelector('#status[data-state="signed-out"]');
      expect(await visitor.page.isVisible('#signin-form')).toBe(true);
      expect(await sessionPartsShown(visitor.page)).toEqual([]); // and again after signing out
      expect(visitor.problems).toEqual([]);
    } finally {
      await visitor.close();
    }
  }, 30_000);

  it("the page's own origin signs two users in and they chat", async () => {
    const [alice, bob] = [await openWatchedPage(browser, `${demo.origin}/`), await openWatchedPage(browser, `${demo.origin}/`)];
    try {
      await signIn(alice.page, 'alice7');
      await signIn(bob.page, 'bob7');
      await openChat(alice.page, 'bob7');
      await send(alice.page, 'hello from the default origin rule');
      await bob.page.click('#convs button[data-conv="user:alice7"]', { timeout: 15_000 });
      await shows(bob.page, 'hello from the default origin rule');
      expect([...alice.problems, ...bob.problems]).toEqual([]);
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  }, 45_000);

  it('a page of another origin cannot open a socket, even with a valid token', async () => {
    const token = await demo.token('mallory7');
    const foreignSite = await startPageServer(await freePort(), {
      '/': { type: 'text/html', body: '<!doctype html><title>foreign</title>' },
    });
    const context = await browser.newContext();
    try {
      const foreign = await context.newPage();
      await foreign.goto(`${foreignSite.origin}/`);
      const outcome = await foreign.evaluate(
        ({ port, token: t }) =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ws?token=${t}`);
            ws.onopen = () => {
              ws.close();
              resolve('open');
            };
            ws.onclose = (e) => resolve(`closed ${e.code}`);
          }),
        { port: demo.port, token },
      );
      expect(outcome).toBe('closed 1006');
    } finally {
      await context.close();
      await foreignSite.close();
    }
  }, 30_000);
});
