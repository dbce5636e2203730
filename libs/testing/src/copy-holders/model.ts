/**
 * A random life of one group for the copy-holder model test: members added, removed and
 * re-added, its tier thresholds switched live (so a membership change may switch it between
 * write- and read-fanout), messages sent (with mentions, some racing a membership change),
 * recalled (by the sender or the admin) and edited (some retried with the same editId). The
 * driver runs the ops through the messaging API — in process (embedded) or over the wire
 * (distributed) — and keeps what the ops alone say: who was a member at each send, which way
 * the group sent, what was recalled and edited. oracle.ts then compares the stores and every
 * view with it.
 */
import fc from 'fast-check';
import type { TierThresholds } from '@seqline/core';
import type { ModelCaller, ModelMessaging } from './model-ports.ts';

export type { ModelCaller, ModelConvState, ModelMessaging, ModelStores } from './model-ports.ts';

export const USER_COUNT = 6;
/** u0 creates the group and is its admin; it never leaves, so it may always recall. */
export const ADMIN = 0;

/**
 * `user`, `by` and `from` pick among those who can do the op (non-members to add, members to
 * send, removable members to remove), by index modulo their count; `mentions` among members.
 */
export type ModelOp =
  | { t: 'add'; user: number; by: number }
  | { t: 'remove'; user: number }
  | { t: 'leave'; user: number }
  | { t: 'send'; from: number; mentions: number[] | 'all' | undefined }
  | { t: 'race'; from: number; user: number }
  | { t: 'recall'; pick: number; byAdmin: boolean }
  | { t: 'edit'; pick: number; withId: boolean }
  | { t: 'retryEdit' }
  | { t: 'tiers'; low: boolean }
  | { t: 'tick' };

const user = fc.nat({ max: 2 * USER_COUNT });

export const modelOpArb: fc.Arbitrary<ModelOp> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant('add' as const), user, by: user }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('remove' as const), user }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('leave' as const), user }) },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('send' as const),
      from: user,
      mentions: fc.option(fc.oneof(fc.constant('all' as const), fc.uniqueArray(user, { minLength: 1, maxLength: 3 })), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('race' as const), from: user, user }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('recall' as const), pick: fc.nat(), byAdmin: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('edit' as const), pick: fc.nat(), withId: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ t: 'retryEdit' as const }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('tiers' as const), low: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ t: 'tick' as const }) },
);

/** Three members or more is huge (read-fanout) under the low thresholds; never huge under the high. */
export const LOW_TIERS: TierThresholds = { smallBelow: 2, largeBelow: 3, maxMembers: 100, hysteresis: 0 };
export const HIGH_TIERS: TierThresholds = { smallBelow: 3, largeBelow: 50, maxMembers: 100, hysteresis: 0 };

export interface SentMessage {
  appinfo: string;
  from: string;
  mentions: string[] | undefined;
  /** Who must hold a copy, from the ops alone; undefined when the send raced a membership change. */
  holders: Set<string> | undefined;
  /** Who recalled it (their own inbox gets the recall entry whether or not they hold a copy). */
  recallers: Set<string>;
  /** The edits that were stored, oldest first: their appinfo (read from the editor's inbox) and body. */
  edits: Array<{ appinfo: string; text: string }>;
}

export interface ModelHooks {
  messaging: ModelMessaging;
  tenant: string;
  /** The run's names: users and the group are fresh for every run on the shared stores. */
  prefix: string;
  /** Switches the live thresholds; the next membership change applies them. */
  setTiers(tiers: TierThresholds): Promise<void>;
  /** Moves the clock one millisecond; absent on a real clock (ops then share a millisecond only by chance). */
  tick?: () => void;
  /** Every job done. */
  drained(): Promise<void>;
  /** The appinfo of the entry at `seq` of `user`'s inbox. */
  appinfoAt(user: string, seq: number): Promise<string>;
}

/** What a run did (a run that never went read-fanout or recalled anything tests little). */
export interface ModelCounts {
  writeSends: number;
  readSends: number;
  racedSends: number;
  /** Membership changes after which the group sent the other way. */
  switches: number;
  recalls: number;
  edits: number;
  /** Recalls and edits of a message whose holders are not the current members (someone joined or left since). */
  divergent: number;
}

export class GroupModel {
  readonly counts: ModelCounts = { writeSends: 0, readSends: 0, racedSends: 0, switches: 0, recalls: 0, edits: 0, divergent: 0 };
  readonly users: string[];
  readonly group: string;
  readonly members = new Set<string>();
  readonly sent: SentMessage[] = [];
  /** Users who were ever members (the others have no conversation to look at). */
  readonly everMember = new Set<string>();
  private mode: 'write' | 'read' = 'write';
  private lastEdit: { message: SentMessage; editId: string; text: string; seq: number } | undefined;
  private n = 0;

  constructor(private readonly h: ModelHooks) {
    this.users = Array.from({ length: USER_COUNT }, (_, i) => `${h.prefix}u${i}`);
    this.group = `${h.prefix}g`;
  }

  private as(i: number | string): ModelCaller {
    return { tenant: this.h.tenant, user: typeof i === 'number' ? (this.users[i] as string) : i };
  }

  private get admin(): string {
    return this.users[ADMIN] as string;
  }

  async start(): Promise<void> {
    const initial = [this.users[1] as string, this.users[2] as string];
    await this.h.messaging.createGroup(this.as(ADMIN), { name: 'model', members: initial, id: this.group });
    for (const u of [this.admin, ...initial]) this.join(u);
    await this.readMode();
    await this.h.drained();
  }

  async apply(op: ModelOp): Promise<void> {
    const m = this.h.messaging;
    const members = [...this.members].sort();
    const outsiders = this.users.filter((u) => !this.members.has(u));
    const removable = members.filter((u) => u !== this.admin);
    const among = (list: string[], i: number): string | undefined => list[i % Math.max(1, list.length)];
    switch (op.t) {
      case 'add': {
        const by = among(members, op.by) as string;
        const target = among(outsiders, op.user);
        if (target === undefined) return;
        await m.addMembers(this.as(by), this.group, [target]);
        this.join(target);
        await this.readMode();
        break;
      }
      case 'remove':
      case 'leave': {
        const target = among(removable, op.user);
        if (target === undefined) return;
        await m.removeMembers(this.as(op.t === 'leave' ? target : this.admin), this.group, [target]);
        this.members.delete(target);
        await this.readMode();
        break;
      }
      case 'send': {
        const from = among(members, op.from) as string;
        const mentions = op.mentions === 'all' ? ['@all'] : op.mentions?.map((i) => among(members, i) as string);
        const named = mentions === undefined ? undefined : [...new Set(mentions)];
        const holders = this.mode === 'write' ? new Set(this.members) : new Set([from, ...(named ?? []).filter((u) => u !== '@all')]);
        await this.send(from, named, holders);
        this.counts[this.mode === 'write' ? 'writeSends' : 'readSends']++;
        break;
      }
      case 'race': {
        // A send and a membership change at once: either may be first, so only the stores say who holds it.
        const from = among(members, op.from) as string;
        const target = among([...outsiders, ...removable], op.user);
        if (target === undefined || target === from) return;
        const joining = !this.members.has(target);
        this.counts.racedSends++;
        await Promise.all([
          this.send(from, undefined, undefined),
          joining ? m.addMembers(this.as(ADMIN), this.group, [target]) : m.removeMembers(this.as(ADMIN), this.group, [target]),
        ]);
        if (joining) this.join(target);
        else this.members.delete(target);
        await this.readMode();
        break;
      }
      case 'recall': {
        const message = this.pick(op.pick);
        if (message === undefined) return;
        const by = op.byAdmin ? this.admin : message.from;
        await m.recall(this.as(by), message.appinfo, message.from);
        message.recallers.add(by);
        this.counts.recalls++;
        this.countDivergent(message);
        break;
      }
      case 'edit': {
        const message = this.pick(op.pick);
        if (message === undefined || message.recallers.size > 0) return;
        const text = `edit ${++this.n}`;
        const editId = op.withId ? `${this.h.prefix}e${this.n}` : undefined;
        const { seq } = await m.edit(this.as(message.from), { appinfo: message.appinfo, body: { text }, ...(editId ? { editId } : {}) });
        message.edits.push({ appinfo: await this.h.appinfoAt(message.from, seq), text });
        this.lastEdit = editId === undefined ? undefined : { message, editId, text, seq };
        this.counts.edits++;
        this.countDivergent(message);
        break;
      }
      case 'retryEdit': {
        const last = this.lastEdit;
        if (last === undefined || last.message.recallers.size > 0) return;
        const again = await m.edit(this.as(last.message.from), {
          appinfo: last.message.appinfo,
          body: { text: last.text },
          editId: last.editId,
        });
        if (again.seq !== last.seq) throw new Error(`a retried edit answered seq ${again.seq}, the first ${last.seq}`);
        break;
      }
      case 'tiers':
        await this.h.setTiers(op.low ? LOW_TIERS : HIGH_TIERS);
        return; // applies at the next membership change
      case 'tick':
        this.h.tick?.();
        return;
    }
    await this.h.drained();
  }

  private async send(from: string, mentions: string[] | undefined, holders: Set<string> | undefined): Promise<void> {
    const appinfo = `${this.h.prefix}m${++this.n}`;
    const body = { text: appinfo };
    await this.h.messaging.send(this.as(from), {
      appinfo,
      to: { group: this.group },
      type: 'text',
      body,
      ...(mentions ? { mentions } : {}),
    });
    this.sent.push({ appinfo, from, mentions, holders, recallers: new Set(), edits: [] });
  }

  private pick(i: number): SentMessage | undefined {
    return this.sent.length === 0 ? undefined : this.sent[i % this.sent.length];
  }

  private countDivergent(message: SentMessage): void {
    const holders = message.holders;
    if (holders !== undefined && (holders.size !== this.members.size || [...holders].some((u) => !this.members.has(u))))
      this.counts.divergent++;
  }

  private join(u: string): void {
    this.members.add(u);
    this.everMember.add(u);
  }

  /** The way the group sends now, as the service decided it at the last membership change. */
  private async readMode(): Promise<void> {
    const mode = (await this.h.messaging.groupInfo(this.as(ADMIN), this.group)).fanout;
    if (mode !== this.mode) this.counts.switches++;
    this.mode = mode;
  }
}
