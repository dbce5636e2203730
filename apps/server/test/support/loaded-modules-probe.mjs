// Preloaded with `node --import <this file>`: records every module the process loads into the
// file named by SEQLINE_LOADED_MODULES_OUT, one path or URL a line.
// - ESM: a resolve hook (module.register, run on the loader thread) appends each resolved URL
//   synchronously, before the module is handed to the importer — nothing is lost at exit.
// - CommonJS: packages required from inside CJS code (Node 20 runs no ESM hooks for require)
//   are all in the shared require cache, written when the process exits.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const out = process.env.SEQLINE_LOADED_MODULES_OUT;
if (out === undefined) throw new Error('loaded-modules-probe: set SEQLINE_LOADED_MODULES_OUT');
register('./loaded-modules-hooks.mjs', import.meta.url, { data: { out } });
const cache = createRequire(import.meta.url).cache;
process.on('exit', () =>
  appendFileSync(
    out,
    Object.keys(cache)
      .map((p) => `${p}\n`)
      .join(''),
  ),
);
