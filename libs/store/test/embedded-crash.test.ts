/**
 * Crash durability of the embedded engine: a child process appends to many inboxes and is
 * SIGKILLed mid-flight, five times over the same directory. After each kill, every append it
 * acknowledged must be readable and each inbox must be consistent: seqs 1..head without holes
 * (an entry is never visible without the ones below it) and the appinfo index agrees.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dedupKeyOf, inboxKey, type InboxKey } from '@seqline/core';
import { openEmbeddedEngine } from '@seqline/store';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const writerScript = fileURLToPath(new URL('./fixtures/crash-writer.ts', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'seqline-crash-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const INBOXES = 32;

/** Runs the writer until it has acknowledged `acksWanted` entries, then SIGKILLs it. */
async function runAndKill(dir: string, acksWanted: number): Promise<Map<string, number[]>> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', writerScript, dir, String(INBOXES)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  const acked = new Map<string, number[]>();
  let count = 0;
  const lines = createInterface({ input: child.stdout });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`writer too slow: ${count} acks; stderr: ${stderr}`)), 25_000);
      void exited.then(() => reject(new Error(`writer exited early; stderr: ${stderr}`)));
      lines.on('line', (line) => {
        const [tag, inbox, seq] = line.split(' ');
        if (tag !== 'ack' || inbox === undefined || seq === undefined) return;
        acked.set(inbox, [...(acked.get(inbox) ?? []), Number(seq)]);
        if (++count === acksWanted) {
          clearTimeout(timer);
          child.kill('SIGKILL'); // mid-flight: other appends are queued or committing
          resolve();
        }
      });
    });
  } finally {
    child.kill('SIGKILL');
  }
  expect(await exited).toBe('SIGKILL');
  lines.close();
  return acked;
}

describe('embedded engine crash durability', () => {
  it('keeps every acknowledged append across kill -9, five times', async () => {
    const dir = join(root, 'data');
    const everAcked = new Map<string, number>();
    for (let round = 0; round < 5; round++) {
      const acked = await runAndKill(dir, 300 + Math.floor(Math.random() * 1500)); // kill at a random point
      for (const [inbox, seqs] of acked) everAcked.set(inbox, Math.max(everAcked.get(inbox) ?? 0, ...seqs));

      const engine = await openEmbeddedEngine({ dir });
      try {
        for (let i = 0; i < INBOXES; i++) {
          const inbox: InboxKey = inboxKey('crash', `u${i}`);
          const entries = await engine.timeline.readAfter({ inbox, afterSeq: 0, limit: 1_000_000 });
          const head = await engine.timeline.headSeq(inbox);
          expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: head }, (_, k) => k + 1));
          expect(head).toBeGreaterThanOrEqual(everAcked.get(inbox) ?? 0);
          for (const seq of acked.get(inbox) ?? []) {
            expect((await engine.timeline.getEntry({ inbox, seq }))?.appinfo).toBe(`${inbox}-${seq}`);
          }
          const index = await engine.timeline.findSeqs({ inbox, keys: entries.map(dedupKeyOf) });
          expect(index.size).toBe(entries.length);
          for (const entry of entries) expect(index.get(dedupKeyOf(entry))).toBe(entry.seq);
        }
      } finally {
        await engine.close();
      }
    }
  }, 120_000);
});
