/**
 * Which bucket markers this process wrote recently, so a busy stream's commit does not re-write
 * its marker on every append. A marker is written with a TTL one day longer than the entries'
 * (MARKER_TTL_SECONDS), so skipping re-writes for up to a refresh period never lets a marker
 * expire before an entry of its bucket. Markers are never deleted, so a memo hit is always true.
 */
import { LruMap } from '@seqline/core';

export const BUCKET_MARKER_REFRESH_MS = 12 * 3600_000;
/** Entries live 180 days; markers one more. */
export const MARKER_TTL_SECONDS = 181 * 86_400;
const DEFAULT_MAX_KEYS = 200_000;

export class BucketMarkerMemo {
  private readonly writtenAt: LruMap<string, number>;

  constructor(maxKeys = DEFAULT_MAX_KEYS) {
    this.writtenAt = new LruMap(maxKeys);
  }

  /** True when the marker was written at or after `since`. */
  fresh(stream: string, bucket: number, since: number): boolean {
    const at = this.writtenAt.get(`${bucket}:${stream}`);
    return at !== undefined && at >= since;
  }

  wrote(stream: string, bucket: number, at: number): void {
    this.writtenAt.set(`${bucket}:${stream}`, at);
  }
}
