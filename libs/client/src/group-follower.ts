import type { ClientLogger } from './logger.ts';
import type { Entry, GroupMessage, GroupNews } from './wire.ts';

export interface GroupFollowerOptions {
  /** One group.history page after `afterGseq`, ascending. */
  fetchPage(group: string, afterGseq: number, limit: number): Promise<{ messages: GroupMessage[]; hasMore: boolean }>;
  /** The server-side cursor of this user in the group (where to start when we know nothing). */
  serverCursor(group: string): Promise<number>;
  /** Hands an ascending batch of one group to the app; the position moves once it resolves. */
  deliver(group: string, messages: GroupMessage[]): Promise<void>;
  pageLimit: number;
  logger: ClientLogger;
}

/**
 * - applied: the push continued (or overlapped) our position; its new messages were delivered.
 * - stale: everything in it was already delivered.
 * - gap: it starts past our position; the missing messages were paged in first.
 */
export type GroupPushOutcome = 'applied' | 'stale' | 'gap';

/**
 * Follows read-fanout group streams — the group-stream twin of the SyncEngine. Per group it
 * keeps the last gseq delivered; pushes, sync's `groups` news and hints in the inbox (a `tick`,
 * a `group` tier switch entry) all run through one serial queue per group, and only messages
 * past the position are delivered. So across every path each stream message reaches the app
 * exactly once per session, ascending, none skipped: a push with prevGseq at or before the
 * position is applied from there; one past it leaves a hole that group.history fills first.
 *
 * Positions live in memory; a new session starts from the server's cursor (which the app moves
 * with `groupAck`: that is also what read counts are made of). Messages after the cursor that
 * were seen in an earlier session are delivered again — dedup by gseq or appinfo if it matters.
 */
export class GroupFollower {
  private readonly positions = new Map<string, number>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly opts: GroupFollowerOptions) {}

  /** Last gseq delivered for the group in this session, if any. */
  position(group: string): number | undefined {
    return this.positions.get(group);
  }

  /** Forgets positions (e.g. a different user logs in). */
  reset(): void {
    this.positions.clear();
  }

  /** A group listed in a sync answer: read from where we are (or the cursor it names) to its head. */
  news(g: GroupNews): Promise<void> {
    return this.serial(g.id, async () => {
      if (!this.positions.has(g.id)) this.positions.set(g.id, g.cursor);
      if (g.headGseq > (this.positions.get(g.id) ?? 0)) await this.catchUp(g.id);
    });
  }

  /** Something says the stream may have news (a tick, a tier switch): page from where we are. */
  hint(group: string): Promise<void> {
    return this.serial(group, async () => {
      await this.ensurePosition(group);
      await this.catchUp(group);
    });
  }

  push(group: string, prevGseq: number, messages: readonly GroupMessage[]): Promise<GroupPushOutcome> {
    return this.serial(group, async (): Promise<GroupPushOutcome> => {
      const pos = await this.ensurePosition(group);
      const last = messages[messages.length - 1];
      if (!last || last.gseq <= pos) return 'stale';
      if (prevGseq > pos || !ascendingAfter(messages, prevGseq)) {
        await this.catchUp(group);
        return 'gap';
      }
      await this.apply(
        group,
        messages.filter((m) => m.gseq > pos),
      );
      return 'applied';
    });
  }

  private async ensurePosition(group: string): Promise<number> {
    let pos = this.positions.get(group);
    if (pos === undefined) {
      pos = await this.opts.serverCursor(group);
      // A page or push may have landed while we asked; never move backwards.
      pos = Math.max(pos, this.positions.get(group) ?? 0);
      this.positions.set(group, pos);
    }
    return pos;
  }

  private async catchUp(group: string): Promise<void> {
    for (;;) {
      const from = this.positions.get(group) ?? 0;
      const page = await this.opts.fetchPage(group, from, this.opts.pageLimit);
      if (!ascendingAfter(page.messages, from)) {
        this.opts.logger.warn({ group, from }, 'seqline: group.history page does not ascend past the position; ignored');
        return;
      }
      await this.apply(group, page.messages);
      if (!page.hasMore || page.messages.length === 0) return;
    }
  }

  private async apply(group: string, messages: readonly GroupMessage[]): Promise<void> {
    const pos = this.positions.get(group) ?? 0;
    const fresh = messages.filter((m) => m.gseq > pos);
    const last = fresh[fresh.length - 1];
    if (!last) return;
    await this.opts.deliver(group, fresh);
    this.positions.set(group, last.gseq);
  }

  private serial<T>(group: string, task: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(group) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => undefined);
    this.queues.set(group, tail);
    void tail.then(() => {
      if (this.queues.get(group) === tail) this.queues.delete(group);
    });
    return run;
  }
}

function ascendingAfter(messages: readonly GroupMessage[], after: number): boolean {
  let prev = after;
  for (const m of messages) {
    if (!(m.gseq > prev)) return false;
    prev = m.gseq;
  }
  return true;
}

/**
 * Groups whose stream moved, according to inbox entries: a tier switch into (or out of)
 * read-fanout, and the `tick` stored with one's own read-fanout message (news for one's other
 * devices). Hints only: sync's `groups` list stays the truth.
 */
export function streamHints(entries: readonly Entry[]): string[] {
  const groups = new Set<string>();
  for (const e of entries) {
    if (e.conv.type !== 'group') continue;
    const body = e.body as { event?: unknown } | undefined;
    if (e.kind === 'tick' || (e.kind === 'group' && body?.event === 'tier')) groups.add(e.conv.id);
  }
  return [...groups];
}
