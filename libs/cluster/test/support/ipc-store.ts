/**
 * The stores of a child-process owner, served by the parent over IPC: the child behaves like a
 * worker talking to a remote database. When the child is SIGSTOPped, a store call it already
 * sent still runs in the parent (a write in flight on the network), and the parent's own
 * writers are never blocked by a lock the stopped child holds (which a shared LMDB file would do).
 */
import type { ChildProcess } from 'node:child_process';
import { FencedError, SeqlineError } from '@seqline/core';
import type { SeqCeilingStore, TimelineStore } from '@seqline/core';
import { fromWireError } from '../../src/index.ts';

type Target = 'timeline' | 'ceilings';
interface CallMsg {
  type: 'call';
  id: number;
  target: Target;
  method: string;
  args: unknown[];
}
interface ReplyMsg {
  type: 'reply';
  id: number;
  ok: boolean;
  value?: unknown;
  error?: { name: string; message: string; code?: string };
}

const TIMELINE_METHODS = ['append', 'findSeqs', 'getEntry', 'readAfter', 'readBefore', 'headSeq', 'addReaders', 'getReaders'] as const;
const CEILING_METHODS = ['nextEpoch', 'drawEpoch', 'recordRelease', 'claim', 'raise'] as const;

/** Child side. */
export function ipcStores(): { timeline: TimelineStore; ceilings: SeqCeilingStore } {
  const send = process.send?.bind(process);
  if (!send) throw new Error('ipcStores needs an IPC channel');
  let next = 0;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  process.on('message', (m: ReplyMsg) => {
    if (m?.type !== 'reply') return;
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!p) return;
    if (m.ok) p.resolve(m.value);
    else p.reject(reviveError(m.error ?? { name: 'Error', message: 'unknown' }));
  });
  const call = (target: Target, method: string, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      send({ type: 'call', id, target, method, args } satisfies CallMsg);
    });
  const proxy = <T>(target: Target, methods: readonly string[]): T =>
    Object.fromEntries(methods.map((m) => [m, (...args: unknown[]) => call(target, m, args)])) as T;
  return { timeline: proxy<TimelineStore>('timeline', TIMELINE_METHODS), ceilings: proxy<SeqCeilingStore>('ceilings', CEILING_METHODS) };
}

function reviveError(e: { name: string; message: string; code?: string }): Error {
  if (e.name === 'FencedError') return new FencedError(e.message);
  if (e.code) return fromWireError({ code: e.code as SeqlineError['code'], message: e.message, retryable: false });
  return new Error(e.message);
}

/** Parent side: answers the child's store calls with the real stores. */
export function serveStores(child: ChildProcess, stores: { timeline: TimelineStore; ceilings: SeqCeilingStore }): void {
  child.on('message', (m: CallMsg) => {
    if (m?.type !== 'call') return;
    const target = stores[m.target] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const fn = target[m.method];
    const reply = (r: Omit<ReplyMsg, 'type' | 'id'>): void => {
      if (child.connected) child.send({ type: 'reply', id: m.id, ...r } satisfies ReplyMsg);
    };
    if (!fn) return reply({ ok: false, error: { name: 'Error', message: `no method ${m.method}` } });
    fn.apply(target, m.args).then(
      (value) => reply({ ok: true, value }),
      (err: unknown) => {
        const e = err instanceof Error ? err : new Error(String(err));
        reply({ ok: false, error: { name: e.name, message: e.message, code: err instanceof SeqlineError ? err.code : undefined } });
      },
    );
  });
}
