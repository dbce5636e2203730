/**
 * An offline user's inbox watched over HTTP (`GET /v1/sync`: no socket, so the user stays
 * offline): when each entry first became visible, which bounds when a notification window could
 * have been open, and the inbox head after each notification (its badge's time).
 */
import { now, type HistoryWriter } from './history.ts';
import { userToken, type SystemUnderTest } from './system.ts';

export async function pollInbox(o: {
  sys: SystemUnderTest;
  user: string;
  history: HistoryWriter;
  wallClock: () => number;
  stopped: () => boolean;
}): Promise<void> {
  let maxSeq = 0;
  while (!o.stopped()) {
    const args = { maxSeq, limit: 1000 };
    const call = now();
    try {
      const token = await userToken(o.sys.tenant, o.user, o.wallClock);
      const res = await fetch(`${o.sys.httpBase()}/v1/sync?maxSeq=${maxSeq}&limit=1000`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json()) as { ok?: boolean; entries?: { seq: number }[]; hasMore?: boolean };
      o.history.write({ t: 'op', dev: `${o.user}/poll`, user: o.user, sock: 0, op: 'sync', call, ret: now(), args, res: body });
      const last = body.entries?.at(-1)?.seq;
      if (body.ok && last !== undefined) maxSeq = last;
      if (body.ok && body.hasMore) continue;
    } catch {
      o.history.write({ t: 'op', dev: `${o.user}/poll`, user: o.user, sock: 0, op: 'sync', call, ret: null, args, res: null });
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
