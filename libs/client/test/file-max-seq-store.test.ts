import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileMaxSeqStore } from '../src/node.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'seqline-maxseq-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('FileMaxSeqStore', () => {
  it('starts at 0 when nothing was saved, and creates its folder on save', async () => {
    const path = join(dir, 'a', 'b', 'maxseq.json');
    const store = new FileMaxSeqStore(path);
    expect(await store.load()).toBe(0);
    await store.save(42);
    expect(await new FileMaxSeqStore(path).load()).toBe(42);
  });

  it('ends with the last value saved, even when saves overlap, and leaves no temp files', async () => {
    const path = join(dir, 'maxseq.json');
    const store = new FileMaxSeqStore(path);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.save(i + 1)));
    expect(await new FileMaxSeqStore(path).load()).toBe(50);
    expect(await readdir(dir)).toEqual(['maxseq.json']);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ maxSeq: 50 });
  });

  it('a failed save rejects and does not block later saves', async () => {
    const blocker = join(dir, 'not-a-dir');
    await writeFile(blocker, 'x');
    const bad = new FileMaxSeqStore(join(blocker, 'maxseq.json'));
    await expect(bad.save(1)).rejects.toThrow();
    const path = join(dir, 'ok.json');
    const store = new FileMaxSeqStore(path);
    await store.save(3);
    expect(await store.load()).toBe(3);
  });

  it('refuses a file that does not hold a max seq rather than syncing from 0', async () => {
    const path = join(dir, 'maxseq.json');
    await writeFile(path, JSON.stringify({ maxSeq: -4 }));
    await expect(new FileMaxSeqStore(path).load()).rejects.toThrow(/does not hold a max seq/);
    await writeFile(path, '{"maxSeq": 1');
    await expect(new FileMaxSeqStore(path).load()).rejects.toThrow();
  });
});
