/**
 * What the writer of a seq log remembers of a stream between appends, so that the usual append
 * reads nothing: the head, the dedup window (its newest non-empty buckets, `windowLength`) and a
 * 30-bit fingerprint of every dedup key (core's dedupKeyOf) indexed in that window, in a FingerprintSet (5–11 bytes
 * each, against ≈ 80 for an appinfo string in a Map). So a whole window — up to about 164 000
 * entries — is held, and an inbox with a long history still appends without a read. An
 * appinfo whose fingerprint is absent was never indexed in the window; a present one (a
 * resend, or about one new appinfo in 6 500 at a full window) is looked up in the store.
 * Valid only while the same writer term appends (WriteGuard.term): another term may have
 * appended meanwhile. Forgotten after any failed append (its outcome is unknown) and reloaded
 * from the store.
 */
import { LruMap, dedupKeyOf, type DedupKey, type Entry } from '@seqline/core';
import { bucketOf } from './entry-codec.ts';
import { FingerprintSet } from './fingerprint-set.ts';

/** A window bucket and the fingerprints of the appinfos indexed in it. */
export interface WindowBucket {
  bucket: number;
  fingerprints: FingerprintSet;
}

export interface StreamState {
  term: string | undefined;
  /** Highest seq stored. */
  head: number;
  /** Non-empty buckets resends are deduped against, newest first (`windowLength`). */
  window: WindowBucket[];
}

/** Entries the window's buckets other than the newest hold at least, unless MAX_WINDOW_BUCKETS is reached first. */
export const WINDOW_ENTRIES = 32_768;
export const MAX_WINDOW_BUCKETS = 16;

/**
 * How many of the buckets (newest first, by the entries each holds) the window keeps: the
 * newest, then older ones until those hold WINDOW_ENTRIES, at most MAX_WINDOW_BUCKETS. Counted
 * in entries, not seqs: every takeover moves a stream's seqs up to its section's ceiling, so a
 * stream whose owner changed a dozen times spans as many sparse buckets (a job replayed 140 s
 * later, 13 takeovers on, found its original outside a two-bucket window and stored it again:
 * docs/faults.md, round fdd5f20f). A dense stream keeps two, as before.
 */
export function windowLength(sizes: readonly number[]): number {
  let older = 0;
  for (let i = 1; i < sizes.length; i++) {
    if (older >= WINDOW_ENTRIES || i >= MAX_WINDOW_BUCKETS) return i;
    older += sizes[i] as number;
  }
  return sizes.length;
}

/** `window` (newest first) cut to the buckets windowLength keeps. */
export function trimWindow(window: WindowBucket[]): WindowBucket[] {
  return window.slice(0, windowLength(window.map((w) => w.fingerprints.size)));
}

/** True when the window would keep a bucket older than those it has (a load reads on). */
export function windowWantsMore(window: readonly WindowBucket[]): boolean {
  return windowLength([...window.map((w) => w.fingerprints.size), 0]) > window.length;
}

/** Fingerprint slots held across all streams: 4 bytes each, so 32 MiB (about 4 million appinfos). */
const MAX_HELD_SLOTS = 8 * 1024 * 1024;

/** FNV-1a over the UTF-16 code units, folded to 30 bits (FingerprintSet stores it + 1 in a Uint32Array). */
export function fingerprint(appinfo: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < appinfo.length; i++) {
    hash ^= appinfo.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash ^ (hash >>> 30)) & 0x3fffffff;
}

/** False when `key` is certainly not indexed in the window; true when it may be. */
export function mayHold(state: StreamState, key: string): boolean {
  const print = fingerprint(key);
  return state.window.some((w) => w.fingerprints.has(print));
}

/**
 * `mayHold` for an entry's dedup key, or its appinfo: the previous layout indexed a message by
 * its plain appinfo, and such rows stay in the window until newer buckets push them out.
 */
export function mayHoldKey(state: StreamState, key: DedupKey, appinfo: string): boolean {
  return mayHold(state, key) || (key !== appinfo && mayHold(state, appinfo));
}

/** The window's bucket numbers, newest first. */
export function windowBuckets(state: StreamState): number[] {
  return state.window.map((w) => w.bucket);
}

/** The state after `written` (ascending seqs, all new) was stored; updates the fingerprints in place. */
export function advance(state: StreamState, written: readonly Entry[]): StreamState {
  let window = state.window;
  for (const entry of written) {
    const bucket = bucketOf(entry.seq);
    let newest = window[0];
    if (newest?.bucket !== bucket) {
      newest = { bucket, fingerprints: new FingerprintSet() };
      window = trimWindow([newest, ...window]);
    }
    newest.fingerprints.add(fingerprint(dedupKeyOf(entry)));
  }
  return { term: state.term, head: Math.max(state.head, written.at(-1)?.seq ?? 0), window };
}

function weight(state: StreamState): number {
  return state.window.reduce((sum, w) => sum + w.fingerprints.capacity, 1);
}

export class WriterStates {
  private readonly held = new LruMap<string, StreamState>(MAX_HELD_SLOTS, weight);

  /** The stream's state if this writer term holds it. */
  get(stream: string, term: string | undefined): StreamState | undefined {
    const state = this.held.get(stream);
    if (state === undefined || state.term === term) return state;
    this.held.delete(stream);
    return undefined;
  }

  remember(stream: string, state: StreamState): void {
    this.held.set(stream, state);
  }

  forget(stream: string): void {
    this.held.delete(stream);
  }
}
