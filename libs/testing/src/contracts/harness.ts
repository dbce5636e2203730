/**
 * Shared plumbing of the port contract suites. The suites run against every adapter, including
 * a real shared database, so they never assume an empty store: every test works on keys with a
 * fresh random tenant, and a store is only "reopened" through the adapter's own opener.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { messageKey, type DedupKey, type Entry, type StoredOutcome } from '@seqline/core';

export interface OpenedStore<T> {
  store: T;
  /** Releases the adapter (connections, file handles). Data stays. */
  close(): Promise<void>;
}

/**
 * Opens the adapter under test. Two calls with the same `dataKey` must reach the same stored
 * data (the second call comes after the first handle was closed: a restart). Whether a new
 * `dataKey` starts empty is up to the adapter (a temp dir does, a shared cluster does not);
 * the suites do not care because they use unique keys.
 */
export type StoreOpener<T> = (dataKey: string) => Promise<OpenedStore<T>>;

/** A random tenant id: keys built on it are unique to one test, even on a shared database. */
export function uniqueTenant(): string {
  return `t${randomBytes(6).toString('hex')}`;
}

/** A random name for data keys, job ids and the like. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/**
 * Opens one store for a whole describe block. Tests share it (with unique keys), which also
 * exercises an adapter holding data of many tests at once.
 */
export function useSharedStore<T>(open: StoreOpener<T>): { readonly store: T } {
  let opened: OpenedStore<T> | undefined;
  beforeAll(async () => {
    opened = await open(uniqueName('shared'));
  });
  afterAll(async () => {
    await opened?.close();
  });
  return {
    get store(): T {
      if (opened === undefined) throw new Error('store used before beforeAll opened it');
      return opened.store;
    },
  };
}

/**
 * Runs `before` on a freshly opened store, closes it, opens the same data again and runs
 * `after` on the new handle: what survives is what a restarted process would see.
 */
export async function acrossReopen<T, S>(
  open: StoreOpener<T>,
  before: (store: T) => Promise<S>,
  after: (store: T, state: S) => Promise<void>,
): Promise<void> {
  const dataKey = uniqueName('reopen');
  const first = await open(dataKey);
  let state: S;
  try {
    state = await before(first.store);
  } finally {
    await first.close();
  }
  const second = await open(dataKey);
  try {
    await after(second.store, state);
  } finally {
    await second.close();
  }
}

/** A plain message entry with a given seq; override any field. */
/** The sender of msgEntry's messages unless overridden. */
export const MSG_FROM = 'bob';

/** The dedup key of a msgEntry message (from MSG_FROM unless `from` is given): what findSeqs takes. */
export function msgKey(appinfo: string, from = MSG_FROM): DedupKey {
  return messageKey(from, appinfo);
}

export function msgEntry(seq: number, appinfo: string, overrides: Partial<Entry> = {}): Entry {
  return {
    seq,
    kind: 'msg',
    appinfo,
    conv: { type: 'user', id: 'bob' },
    from: MSG_FROM,
    sendTime: 1_700_000_000_000 + seq,
    type: 'text',
    body: { text: `message ${appinfo}` },
    ...overrides,
  };
}

/** A store append's outcome for an entry whose key was already stored as `original`. */
export function dup(original: Entry): StoredOutcome {
  return { seq: original.seq, duplicate: true, original };
}

export function seqsOf(entries: Entry[]): number[] {
  return entries.map((entry) => entry.seq);
}

/** Fisher–Yates with Math.random: the order concurrent calls are issued in. */
export function shuffled<T>(values: readonly T[]): T[] {
  const out = [...values];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
