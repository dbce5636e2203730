/**
 * Which bucket markers this process wrote recently, so a busy stream's commit does not re-write
 * its marker on every append. A marker is written with a TTL one day longer than the entries'
 * (MARKER_TTL_SECONDS), so skipping re-writes for up to a refresh period never lets a marker
 * expire before an entry of its bucket. Markers are never deleted, so a memo hit is always true.
 *
 * Only each stream's newest marked bucket is remembered: seqs only grow, so appends go to that
 * bucket or a newer one; an older one asked about again is simply re-written (idempotent).
 * Keyed by the stream alone: no per-append string building.
 */
import { TwoGenerationMap } from '@seqline/core';

export const BUCKET_MARKER_REFRESH_MS = 12 * 3600_000;
/** Entries live 180 days; markers one more. */
export const MARKER_TTL_SECONDS = 181 * 86_400;
const DEFAULT_MAX_KEYS = 200_000;

interface MarkedBucket {
  bucket: number;
  at: number;
}

export class BucketMarkerMemo {
  private readonly newest: TwoGenerationMap<string, MarkedBucket>;

  constructor(maxKeys = DEFAULT_MAX_KEYS) {
    this.newest = new TwoGenerationMap(maxKeys);
  }

  /** True when the marker was written at or after `since`. */
  fresh(stream: string, bucket: number, since: number): boolean {
    const marked = this.newest.get(stream);
    return marked !== undefined && marked.bucket === bucket && marked.at >= since;
  }

  wrote(stream: string, bucket: number, at: number): void {
    const marked = this.newest.get(stream);
    if (marked === undefined || bucket > marked.bucket || (bucket === marked.bucket && at > marked.at))
      this.newest.set(stream, { bucket, at });
  }
}
