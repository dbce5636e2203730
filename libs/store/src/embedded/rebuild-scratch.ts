/**
 * A throwaway LMDB environment for one rebuild's fold (conversation-rebuild.ts). A chunk of
 * seqs touches items all over the index (they are keyed by conversation first), so writing each
 * chunk into the engine would put hundreds of scattered pages into the engine's shared, fsync'd
 * commits, where every other write waits for them (measured: a send's p99 went up 14× during a
 * 1 000 000-entry rebuild). Here the chunks commit under a write lock of their own and without
 * fsync; only the finished fold is copied into the engine, in key order, a few pages per commit.
 *
 * Nothing in it needs to survive: each rebuild opens its own directory under `root` and removes
 * it when it ends, and the engine removes `root` when it opens (a crash's leftovers).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { open, type Key, type RootDatabase } from 'lmdb';
import { ConversationRows } from './conversation-dbs.ts';

export class RebuildScratch {
  private constructor(
    private readonly env: RootDatabase,
    private readonly dir: string,
    /** The fold's rows (space 0 of the scratch's own index database). */
    readonly rows: ConversationRows,
  ) {}

  static async open(root: string): Promise<RebuildScratch> {
    await mkdir(root, { recursive: true });
    const dir = await mkdtemp(join(root, 'rebuild-'));
    const env = open({ path: dir, noSubdir: false, noSync: true, maxDbs: 1 });
    const db = env.openDB<unknown, Key>({ name: 'conv_index' });
    return new RebuildScratch(env, dir, new ConversationRows(db as ConstructorParameters<typeof ConversationRows>[0]));
  }

  /** Runs `work` (writes of `rows`) in one transaction of the scratch; resolves once committed. */
  async write(work: () => void): Promise<void> {
    await this.env.transaction(work);
  }

  async remove(): Promise<void> {
    await this.env.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Removes every scratch left under `root` (by a process that died mid-rebuild). */
export async function removeRebuildScratches(root: string): Promise<void> {
  await rm(root, { recursive: true, force: true });
}
