/**
 * Child process holding thousands of member sockets (a process may open 20 000 files here, and
 * the server's side of each socket counts against the server process, so the clients live in
 * their own). Driven over IPC by swarm.ts: connect, count group pushes, read as every member.
 */
import { issueToken } from '@seqline/protocol';
import WebSocket from 'ws';

type Cmd =
  | { cmd: 'connect'; url: string; users: string[]; secret: string; tenant: string }
  | { cmd: 'pushes'; appinfo: string }
  | { cmd: 'readAll'; group: string; appinfo: string }
  | { cmd: 'call'; member: number; op: string; args: object }
  | { cmd: 'close' };

interface Member {
  user: string;
  ws: WebSocket;
  nextId: number;
  waiting: Map<number, (reply: Record<string, unknown>) => void>;
}

const members: Member[] = [];
/** appinfo → receipt times of group.push frames carrying it, one per socket. */
const pushed = new Map<string, number[]>();
let badPushes = 0;
/** Sockets the server closed: "user code reason". */
const closed: string[] = [];
let connectStarted = Date.now();

function reply(msg: object): void {
  process.send?.(msg);
}

function connectOne(url: string, user: string, token: string): Promise<Member> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
    const m: Member = { user, ws, nextId: 1, waiting: new Map() };
    ws.on('message', (data: WebSocket.RawData) => {
      const frame = JSON.parse(String(data)) as Record<string, unknown>;
      if (frame.op === 'group.push') {
        const messages = frame.messages as Array<{ appinfo: string; gseq: number }>;
        if (typeof frame.prevGseq !== 'number' || !Array.isArray(messages)) badPushes++;
        const now = Date.now();
        for (const msg of messages) {
          let times = pushed.get(msg.appinfo);
          if (!times) pushed.set(msg.appinfo, (times = []));
          times.push(now);
        }
        return;
      }
      if (typeof frame.id === 'number') {
        const resolveReply = m.waiting.get(frame.id);
        m.waiting.delete(frame.id);
        resolveReply?.(frame);
      }
    });
    ws.once('open', () => {
      resolve(m);
      ws.on('error', (err) => closed.push(`${user} error ${err.message}`));
    });
    ws.on('close', (code: number, reason: Buffer) => {
      closed.push(`${user} ${code} ${reason.toString()} at+${Date.now() - connectStarted}ms`);
      for (const done of m.waiting.values()) done({ ok: false, error: { code: 'CLOSED', message: `socket closed ${code}` } });
      m.waiting.clear();
    });
    ws.once('error', reject);
  });
}

function call(m: Member, op: string, args: object): Promise<Record<string, unknown>> {
  const id = m.nextId++;
  return new Promise((resolve) => {
    m.waiting.set(id, resolve);
    m.ws.send(JSON.stringify({ id, op, ...args }));
  });
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

async function handle(c: Cmd): Promise<void> {
  switch (c.cmd) {
    case 'connect': {
      const t0 = Date.now();
      connectStarted = t0;
      let failed = 0;
      const tokens = await Promise.all(c.users.map((user) => issueToken({ secret: c.secret, user, tenant: c.tenant, ttlSeconds: 3600 })));
      const base = members.length;
      await inBatches(
        c.users.map((user, i) => ({ user, token: tokens[i] as string, i })),
        250,
        async ({ user, token, i }) => {
          try {
            members[base + i] = await connectOne(c.url, user, token);
          } catch {
            failed++;
          }
        },
      );
      return reply({ type: 'connected', count: members.filter(Boolean).length, failed, ms: Date.now() - t0 });
    }
    case 'pushes': {
      const times = pushed.get(c.appinfo) ?? [];
      return reply({
        type: 'pushes',
        count: times.length,
        last: times.length ? Math.max(...times) : 0,
        bad: badPushes,
        closed: closed.slice(0, 10),
      });
    }
    case 'readAll': {
      const t0 = Date.now();
      let listed = 0;
      let found = 0;
      const errors: string[] = [];
      await inBatches(members.filter(Boolean), 500, async (m) => {
        const sync = await call(m, 'sync', { maxSeq: 0, limit: 1000 });
        const news = (sync.groups as Array<{ id: string; headGseq: number; cursor: number }> | undefined)?.find((g) => g.id === c.group);
        if (!news) {
          if (errors.length < 5) errors.push(`${m.user}: ${JSON.stringify(sync).slice(0, 200)}`);
          return;
        }
        listed++;
        const page = await call(m, 'group.history', { group: c.group, afterGseq: news.cursor, limit: 1000 });
        const messages = page.messages as Array<{ appinfo: string }> | undefined;
        if (messages?.some((msg) => msg.appinfo === c.appinfo)) found++;
        else if (errors.length < 5) errors.push(`${m.user}: ${JSON.stringify(page).slice(0, 200)}`);
      });
      return reply({ type: 'readAll', listed, found, errors, ms: Date.now() - t0 });
    }
    case 'call': {
      const m = members[c.member];
      if (!m) throw new Error(`no member socket ${c.member}`);
      const t0 = Date.now();
      const result = await call(m, c.op, c.args);
      return reply({ type: 'call', result, ms: Date.now() - t0, at: t0 });
    }
    case 'close': {
      for (const m of members) m?.ws.terminate();
      reply({ type: 'closed' });
      process.exit(0);
    }
  }
}

process.on('message', (c: Cmd) => {
  handle(c).catch((err: unknown) => reply({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }));
});
reply({ type: 'ready' });
