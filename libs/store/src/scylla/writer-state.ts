/**
 * What the writer of a seq log remembers of a stream between appends, so that the usual append
 * reads nothing: the head, the dedup window (the stream's last two non-empty buckets) and, when
 * it is small enough to hold, every appinfo indexed in that window. Valid only while the same
 * writer term appends (WriteGuard.term): another term may have appended meanwhile. Forgotten
 * after any failed append (its outcome is unknown) and reloaded from the store.
 */
import { LruMap, type Entry } from '@seqline/core';
import { bucketOf } from './entry-codec.ts';

export interface StreamState {
  term: string | undefined;
  /** Highest seq stored. */
  head: number;
  /** Non-empty buckets resends are deduped against, newest first (at most two). */
  window: number[];
  /**
   * appinfo → seq of every entry indexed in the window, or undefined when the window holds more
   * than MAX_WINDOW_APPINFOS: then each append looks its appinfos up in the store instead.
   */
  appinfos: Map<string, number> | undefined;
}

/** Above this many appinfos in its window a stream is deduped by a store read per append. */
export const MAX_WINDOW_APPINFOS = 4096;
/** Appinfos held across all streams (≈ 100 bytes each). */
const MAX_HELD_APPINFOS = 500_000;

/** The state after `written` (ascending seqs, all new) was stored; updates the appinfo map in place. */
export function advance(state: StreamState, written: readonly Entry[]): StreamState {
  let window = state.window;
  let appinfos = state.appinfos;
  for (const entry of written) {
    const bucket = bucketOf(entry.seq);
    if (bucket !== window[0]) {
      window = [bucket, ...window.slice(0, 1)];
      if (appinfos !== undefined) {
        for (const [appinfo, seq] of appinfos) if (!window.includes(bucketOf(seq))) appinfos.delete(appinfo);
      }
    }
    appinfos?.set(entry.appinfo, entry.seq);
  }
  if (appinfos !== undefined && appinfos.size > MAX_WINDOW_APPINFOS) appinfos = undefined;
  return { term: state.term, head: Math.max(state.head, written.at(-1)?.seq ?? 0), window, appinfos };
}

export class WriterStates {
  private readonly held = new LruMap<string, StreamState>(MAX_HELD_APPINFOS, (s) => 1 + (s.appinfos?.size ?? 0));

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
