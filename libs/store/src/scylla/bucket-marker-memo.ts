/**
 * Which bucket markers this process wrote recently, so a busy stream's commit does not re-write
 * its marker on every append. A marker is written with a TTL one day longer than the entries'
 * (MARKER_TTL_SECONDS), so skipping re-writes for up to a refresh period never lets a marker
 * expire before an entry of its bucket. Markers are never deleted, so a memo hit is always true.
 */
export const BUCKET_MARKER_REFRESH_MS = 12 * 3600_000;
/** Entries live 180 days; markers one more. */
export const MARKER_TTL_SECONDS = 181 * 86_400;
const DEFAULT_MAX_KEYS = 200_000;

export class BucketMarkerMemo {
  /** Insertion order = oldest write first. */
  private readonly writtenAt = new Map<string, number>();

  constructor(private readonly maxKeys = DEFAULT_MAX_KEYS) {}

  /** True when the marker was written at or after `since`. */
  fresh(stream: string, bucket: number, since: number): boolean {
    const at = this.writtenAt.get(`${bucket}:${stream}`);
    return at !== undefined && at >= since;
  }

  wrote(stream: string, bucket: number, at: number): void {
    const key = `${bucket}:${stream}`;
    this.writtenAt.delete(key);
    this.writtenAt.set(key, at);
    if (this.writtenAt.size > this.maxKeys) {
      const oldest = this.writtenAt.keys().next();
      if (oldest.done !== true) this.writtenAt.delete(oldest.value);
    }
  }
}
