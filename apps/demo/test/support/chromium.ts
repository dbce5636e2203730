/**
 * Debian's Chromium (`apt-get install -y chromium`) driven by playwright-core: never a browser
 * download. Missing Chromium skips the browser suite with the reason printed; with CI=true it
 * fails instead (CI installs it).
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.SEQLINE_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../../../artifacts/', import.meta.url));

/** Why the suite cannot run here, or null when it can. */
export const chromiumMissing: string | null = existsSync(CHROMIUM)
  ? null
  : `${CHROMIUM} not found (install it: apt-get update && apt-get install -y chromium)`;

export const mustRunInCi = process.env.CI === 'true';

/**
 * Playwright gives every launch a fresh temporary profile (its own --user-data-dir, deleted on
 * close): no state carries over between runs. The flags keep Chromium off the network except
 * for the pages under test.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: 30_000,
  });
}

/** Saves a screenshot of each page to artifacts/ and returns the paths (for a failed test's log). */
export async function screenshots(test: string, pages: ReadonlyArray<{ label: string; page: Page }>): Promise<string[]> {
  await mkdir(ARTIFACTS, { recursive: true });
  const slug = test.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 60);
  const paths: string[] = [];
  for (const { label, page } of pages) {
    if (page.isClosed()) continue;
    const path = join(ARTIFACTS, `browser-${slug}-${label}-${Date.now()}.png`);
    try {
      await page.screenshot({ path, fullPage: true, timeout: 5_000 });
      paths.push(path);
    } catch {
      /* a crashed page has nothing to show */
    }
  }
  return paths;
}
