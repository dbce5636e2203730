/**
 * A page in a browser window of its own (a context), as a person opens it — no socket tap —
 * with every console error, uncaught error, failed request and error answer recorded. The demo
 * helpers here drive it the way the README tells a person to.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors, failed loads and answers ≥ 400, in order. */
  problems: string[];
  close(): Promise<void>;
}

export async function openWatchedPage(browser: Browser, url: string): Promise<WatchedPage> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${String(err)}`));
  page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
  });
  await page.goto(url);
  return { context, page, problems, close: () => context.close() };
}

/** The selectors of a session: none of them may show while signed out. */
export const SESSION_PARTS = ['#app', '#convs', '#chat', '#send-form', '#sign-out', '#session-footer'];

/** The selectors shown while signed out that are visible now (expected: none). */
export async function sessionPartsShown(page: Page): Promise<string[]> {
  const shown: string[] = [];
  for (const selector of SESSION_PARTS) if (await page.isVisible(selector)) shown.push(selector);
  return shown;
}

/** The status of the page's declared icon (`<link rel="icon">`), or null when it declares none. */
export async function iconStatus(page: Page): Promise<number | null> {
  const href = await page.evaluate(() => document.querySelector('link[rel="icon"]')?.getAttribute('href') ?? null);
  if (href === null) return null;
  return (await page.request.get(new URL(href, page.url()).href)).status();
}

/** Types the user and presses Sign in; waits for the socket. Throws with the page's error line if refused. */
export async function signIn(page: Page, user: string): Promise<void> {
  await page.fill('#user', user);
  await page.getByRole('button', { name: 'Sign in' }).click();
  try {
    await page.waitForSelector('#status[data-state="connected"]', { timeout: 15_000 });
  } catch {
    throw new Error(`sign-in as ${user} did not connect; the page says: ${JSON.stringify(await page.textContent('#error'))}`);
  }
}

/** Opens the chat with `peer` as the README says: "chat with (user)", then Open. */
export async function openChat(page: Page, peer: string): Promise<void> {
  await page.getByPlaceholder('chat with (user)').fill(peer);
  await page.getByRole('button', { name: 'Open' }).click();
}

/** Sends through the form and waits for its acknowledgement line. */
export async function send(page: Page, text: string): Promise<void> {
  await page.evaluate(() => {
    const line = document.getElementById('last-send');
    if (line) line.textContent = '';
  });
  await page.fill('#text', text);
  await page.press('#text', 'Enter');
  await page.waitForSelector('#last-send:has-text("seq")', { timeout: 15_000 });
}

/** Waits until the open chat shows a message with exactly this text. */
export async function shows(page: Page, text: string): Promise<void> {
  await page.waitForSelector(`#messages .msg .text:text-is(${JSON.stringify(text)})`, { timeout: 15_000 });
}
