/**
 * A round's history as JSON lines (the format tools/checker reads: history.go). Times are
 * milliseconds on this process's monotonic clock (`now`), so a child process's clock jump never
 * bends the history. Lines are buffered and flushed in order; `close` resolves once written.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** Milliseconds on the driver's monotonic clock (with fractions). */
export const now = (): number => performance.now();

export type HistoryRecord = { t: string } & Record<string, unknown>;

export class HistoryWriter {
  private readonly out: WriteStream;
  private pending: string[] = [];
  private flushing = false;
  /** Records written, by type (for the campaign's table). */
  readonly counts = new Map<string, number>();

  constructor(readonly path: string) {
    this.out = createWriteStream(path, { flags: 'w' });
  }

  write(rec: HistoryRecord): void {
    this.counts.set(rec.t, (this.counts.get(rec.t) ?? 0) + 1);
    this.pending.push(JSON.stringify(rec));
    if (this.pending.length >= 256) this.flush();
  }

  private flush(): void {
    if (this.flushing || this.pending.length === 0) return;
    const chunk = this.pending.join('\n') + '\n';
    this.pending = [];
    this.flushing = true;
    const ok = this.out.write(chunk);
    const done = () => {
      this.flushing = false;
      if (this.pending.length >= 256) this.flush();
    };
    if (ok) done();
    else this.out.once('drain', done);
  }

  async close(): Promise<void> {
    while (this.flushing) await new Promise((r) => setTimeout(r, 5));
    if (this.pending.length > 0) this.out.write(this.pending.join('\n') + '\n');
    this.pending = [];
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}
