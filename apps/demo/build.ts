/**
 * Builds the demo page into `dist/` (or `outdir`): src/app.ts bundled for browsers with the SDK
 * (`@seqline/client` from its TypeScript source), index.html, style.css and favicon.svg copied beside it.
 * `npm start` runs it first (the root `prestart`); the browser tests call buildDemo().
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const HERE = fileURLToPath(new URL('.', import.meta.url));
export const DEMO_DIST = join(HERE, 'dist');

/** A browser bundle of one entry: ESM, the SDK's source (condition `source`), no Node builtins. */
export async function bundleForBrowser(entry: string, outfile: string, format: 'esm' | 'iife' = 'esm', globalName?: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'browser',
    format,
    target: ['es2022'],
    conditions: ['source'],
    sourcemap: false,
    logLevel: 'warning',
    legalComments: 'none',
    ...(globalName === undefined ? {} : { globalName }),
  });
}

export async function buildDemo(outdir = DEMO_DIST): Promise<string> {
  await rm(outdir, { recursive: true, force: true });
  await mkdir(outdir, { recursive: true });
  await bundleForBrowser(join(HERE, 'src/app.ts'), join(outdir, 'app.js'));
  for (const file of ['index.html', 'style.css', 'favicon.svg']) await copyFile(join(HERE, 'src', file), join(outdir, file));
  return outdir;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const outdir = await buildDemo();
  process.stdout.write(`demo built in ${Date.now() - started} ms: ${outdir}\n`);
}
