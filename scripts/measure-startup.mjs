#!/usr/bin/env node
// Start-up cost of the embedded server: wall time from spawn until "seqline listening" is
// logged, and the process's resident set (VmRSS) right then and 2 s later. Linux only (/proc).
// Usage: node scripts/measure-startup.mjs [runs] -- <node args...>
//   e.g. node scripts/measure-startup.mjs 5 -- apps/server/dist/main.js
//        node scripts/measure-startup.mjs 5 -- --conditions=source --import tsx apps/server/src/main.ts
// (Through `npm start` — pass npm-cli.js as the script — the RSS is npm's, not the server's.)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const sep = process.argv.indexOf('--');
const runs = Number(process.argv[2] ?? 5) || 5;
const nodeArgs = sep >= 0 ? process.argv.slice(sep + 1) : ['apps/server/dist/main.js'];

function rssMiB(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}

function once() {
  return new Promise((resolve, reject) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'seqline-startup-'));
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, nodeArgs, {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SEQLINE_DATA_DIR: dataDir, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true, // its own process group: SIGTERM reaches the server under `npm start` too
    });
    let out = '';
    let result;
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (result || !out.includes('seqline listening')) return;
      result = { ms: Number(process.hrtime.bigint() - started) / 1e6, rssAtListen: rssMiB(child.pid) };
      setTimeout(() => {
        result.rssSettled = rssMiB(child.pid);
        process.kill(-child.pid, 'SIGTERM');
      }, 2000);
    });
    child.on('exit', (code) => {
      rmSync(dataDir, { recursive: true, force: true });
      if (result?.rssSettled !== undefined) resolve(result);
      else reject(new Error(`server exited (${code}) before measuring:\n${out}`));
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const all = [];
for (let i = 0; i < runs; i++) all.push(await once());
const fmt = (n) => n.toFixed(0);
console.log(`node ${nodeArgs.join(' ')}  (${runs} runs)`);
console.log(`  start to "seqline listening": median ${fmt(median(all.map((r) => r.ms)))} ms  [${all.map((r) => fmt(r.ms)).join(', ')}]`);
console.log(`  RSS at listen:                median ${fmt(median(all.map((r) => r.rssAtListen)))} MiB`);
console.log(`  RSS 2 s later:                median ${fmt(median(all.map((r) => r.rssSettled)))} MiB`);
