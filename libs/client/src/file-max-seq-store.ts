import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { MaxSeqStore } from './max-seq-store.ts';

/**
 * Max seq in a small JSON file. Each save writes a fresh temp file, fsyncs it and renames it
 * over the old one, so a crash leaves either the old or the new value, never a torn file.
 * Saves are serialised: the file always ends with the value of the last save called.
 */
export class FileMaxSeqStore implements MaxSeqStore {
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly path: string) {}

  async load(): Promise<number> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    const seq: unknown = (JSON.parse(text) as { maxSeq?: unknown }).maxSeq;
    // A bad file is surfaced, not read as 0: syncing from 0 would replay the whole inbox.
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
      throw new Error(`max seq file ${this.path} does not hold a max seq`);
    }
    return seq;
  }

  save(seq: number): Promise<void> {
    const next = this.chain.then(() => this.write(seq));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async write(seq: number): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      const fh = await open(tmp, 'w');
      try {
        await fh.writeFile(JSON.stringify({ maxSeq: seq }));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.path);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }
}
