/**
 * The big inbox of the conversations bench: 10 000 conversations and 1 000 000 entries in one
 * LMDB inbox, built once through the timeline store (so the index is written as in production)
 * and cached under .scratch/, keyed by a hash of the index's source files and these parameters:
 * a layout change rebuilds it, a bench re-run reuses it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { inboxKey, silentLogger, type Entry, type InboxKey } from '@seqline/core';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { messageBody } from './fixtures.ts';

export const BIG_CONVERSATIONS = 10_000;
export const BIG_ENTRIES = 1_000_000;
/** Entries per append while building: large batches, one transaction each. */
const BUILD_BATCH = 5_000;
export const BIG_SELF = 'owner';
export const BIG_INBOX: InboxKey = inboxKey('bench', BIG_SELF);

/** Files whose change can change what is stored: the cache is keyed by their contents. */
const LAYOUT_SOURCES = ['keys.ts', 'conversation-dbs.ts', 'conversation-writer.ts', 'seq-log.ts', 'json-rows.ts'];

function cacheKey(): string {
  const hash = createHash('sha256').update(`v1 ${BIG_CONVERSATIONS} ${BIG_ENTRIES} ${BUILD_BATCH}`);
  for (const name of LAYOUT_SOURCES) {
    const file = fileURLToPath(new URL(`../libs/store/src/embedded/${name}`, import.meta.url));
    if (existsSync(file)) hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Entry `seq` of the big inbox: a deterministic mix of 1:1 chats and groups, one in five sent by
 * the owner (which reads the chat), one in fifty mentioning the owner. Conversations are picked
 * by a multiplicative hash, so activity is spread over all 10 000 and the list order is mixed.
 */
export function bigInboxEntry(seq: number): Entry {
  const n = (seq * 2654435761) >>> 0;
  const c = n % BIG_CONVERSATIONS;
  const own = n % 5 === 0;
  const group = c % 4 === 0;
  const peer = `p${c}`;
  const entry: Entry = {
    seq,
    kind: 'msg',
    appinfo: `big-${seq}`,
    conv: group ? { type: 'group', id: `g${c}` } : { type: 'user', id: peer },
    from: own ? BIG_SELF : peer,
    sendTime: 1_700_000_000_000 + seq,
    type: 'text',
    body: messageBody(),
  };
  if (!own && n % 50 === 1) entry.mentions = [BIG_SELF];
  return entry;
}

export interface BigInbox {
  engine: EmbeddedEngine;
  /** The LMDB directory (the cache: a bench that writes copies it first). */
  dir: string;
  /** How it was obtained, for the notes. */
  origin: string;
}

/** Opens the cached big inbox, building it first when the cache is missing or stale. */
export async function openBigInbox(): Promise<BigInbox> {
  const root = fileURLToPath(new URL('../.scratch/', import.meta.url));
  const key = cacheKey();
  const dir = join(root, `bench-conversations-${key}`);
  const done = join(dir, 'built');
  if (existsSync(done)) {
    return {
      engine: await openEmbeddedEngine({ dir, logger: silentLogger }),
      dir,
      origin: `cached in .scratch/bench-conversations-${key}`,
    };
  }
  rmSync(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const engine = await openEmbeddedEngine({ dir, logger: silentLogger });
  const t0 = performance.now();
  for (let from = 1; from <= BIG_ENTRIES; from += BUILD_BATCH) {
    const batch = Array.from({ length: Math.min(BUILD_BATCH, BIG_ENTRIES - from + 1) }, (_, i) => bigInboxEntry(from + i));
    await engine.timeline.append({ inbox: BIG_INBOX, entries: batch });
  }
  const seconds = (performance.now() - t0) / 1000;
  writeFileSync(done, `${new Date().toISOString()} ${seconds.toFixed(1)} s\n`);
  return {
    engine,
    dir,
    origin: `built in ${seconds.toFixed(1)} s (${BUILD_BATCH} entries per append), cached in .scratch/bench-conversations-${key}`,
  };
}
