/** Test doubles and builders for the cluster tests (never used by product code). */
import { performance } from 'node:perf_hooks';
import { groupKey, inboxKey, shardOf } from '@seqline/core';
import type { GroupKey, InboxKey, Logger, NewEntry, PushBus, PushMessage, PushToEach } from '@seqline/core';

export interface LogRecord {
  level: string;
  msg: string | undefined;
  obj: Record<string, unknown>;
  at: number;
}

/** Keeps every record with its bindings, shared by all children; optionally mirrors lines out. */
export class MemoryLogger implements Logger {
  constructor(
    readonly records: LogRecord[] = [],
    private readonly bindings: Record<string, unknown> = {},
    private readonly sink?: (r: LogRecord) => void,
  ) {}
  debug(obj: object, msg?: string): void {
    this.add('debug', obj, msg);
  }
  info(obj: object, msg?: string): void {
    this.add('info', obj, msg);
  }
  warn(obj: object, msg?: string): void {
    this.add('warn', obj, msg);
  }
  error(obj: object, msg?: string): void {
    this.add('error', obj, msg);
  }
  child(bindings: object): Logger {
    return new MemoryLogger(this.records, { ...this.bindings, ...bindings }, this.sink);
  }
  find(msg: string, where: Record<string, unknown> = {}): LogRecord[] {
    return this.records.filter((r) => r.msg === msg && Object.entries(where).every(([k, v]) => r.obj[k] === v));
  }
  private add(level: string, obj: object, msg?: string): void {
    const r = { level, msg, obj: { ...this.bindings, ...(obj as Record<string, unknown>) }, at: Math.round(performance.now()) };
    this.records.push(r);
    this.sink?.(r);
  }
}

export class RecordingPushBus implements PushBus {
  readonly published: PushMessage[] = [];
  publish(msg: PushMessage): void {
    this.published.push(msg);
  }
  publishToEach({ inboxes, msg }: PushToEach): void {
    for (const inbox of inboxes) this.publish({ ...msg, inbox });
  }
  subscribe(): () => void {
    return () => {};
  }
  isOnline(): boolean | undefined {
    return undefined;
  }
  async close(): Promise<void> {}
}

let counter = 0;
export function msg(appinfo = `app-${process.pid}-${++counter}`, text = 'hi'): NewEntry {
  return {
    kind: 'msg',
    appinfo,
    conv: { type: 'user', id: 'bob' },
    from: 'bob',
    sendTime: 1_700_000_000_000,
    type: 'text',
    body: { text },
  };
}

/** A message as it goes into a read-fanout group stream. */
export function groupMsg(group: GroupKey, appinfo = `gapp-${process.pid}-${++counter}`, text = 'hi all'): NewEntry {
  const id = group.slice(group.indexOf(':') + 1);
  return { kind: 'msg', appinfo, conv: { type: 'group', id }, from: 'bob', sendTime: 1_700_000_000_000, type: 'text', body: { text } };
}

/** A group of `tenant` that hashes into `shard`. */
export function groupInShard(tenant: string, shard: number, shardCount: number): GroupKey {
  for (let i = 0; ; i++) {
    const key = groupKey(tenant, `g${i}`);
    if (shardOf(key, shardCount) === shard) return key;
  }
}

/** An inbox of `tenant` that hashes into `shard`. */
export function inboxInShard(tenant: string, shard: number, shardCount: number, skip = 0): InboxKey {
  let found = 0;
  for (let i = 0; ; i++) {
    const key = inboxKey(tenant, `u${i}`);
    if (shardOf(key, shardCount) === shard && found++ === skip) return key;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns truthy (returned) or the timeout passes (throws). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 15_000, everyMs = 25): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Strictly increasing, as a message for expect. */
export function firstNonIncreasing(seqs: number[]): string | undefined {
  for (let i = 1; i < seqs.length; i++) {
    if ((seqs[i] as number) <= (seqs[i - 1] as number)) return `seq ${seqs[i]} at #${i} after ${seqs[i - 1]}`;
  }
  return undefined;
}
