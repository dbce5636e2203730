/**
 * Issue 4's figures on the embedded server (`npm start` in a child process):
 * 1. write-fanout of one message to a 2 000-member `large` group (tiers moved live through the
 *    admin API): send → every member inbox has it (queues idle, then every inbox verified);
 * 2. read-fanout to a 10 000-member `huge` group: send → ack (the stream append; readable from
 *    then on), group.history reads, and send → the group.push frame on all 10 000 sockets, which
 *    a child process holds (apps/server/test/socket-swarm.ts, driven over IPC);
 * 3. storage writes per huge-group message for 1 000 and 10 000 members: inbox heads of every
 *    member and the group stream head, before and after.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { issueAdminToken } from '@seqline/protocol';
import { RUN_ID } from './fixtures.ts';
import { fmtMs, median, type BenchResult, type Figure } from './stats.ts';
import { BENCH_SECRET, mapLimited, sleep, startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const SWARM_CHILD = fileURLToPath(new URL('../apps/server/test/socket-swarm.ts', import.meta.url));
const WRITE_MEMBERS = 2000;
const WRITE_REPEATS = 5;
const READ_MEMBERS = 10_000;
const CHUNK = 2000;

type Json = Record<string, unknown>;

class Admin {
  private constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}
  static async of(port: number): Promise<Admin> {
    return new Admin(
      `http://127.0.0.1:${port}/v1/admin/`,
      await issueAdminToken({ secret: BENCH_SECRET, name: 'bench', ttlSeconds: 3600 }),
    );
  }
  async call(method: string, path: string, body?: object): Promise<Json> {
    const res = await fetch(this.base + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`admin ${method} ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as Json;
  }
  async idle(): Promise<boolean> {
    const q = (await this.call('GET', 'queues')) as {
      queues: Record<string, { running: number; waiting: number; delayed: number }>;
      pools: Record<string, { running: number; waiting: number }>;
    };
    return [...Object.values(q.queues), ...Object.values(q.pools)].every((c) => c.running === 0 && c.waiting === 0);
  }
  async headSeq(user: string): Promise<number> {
    return (await this.call('GET', `inbox/default/${user}?after=0&limit=1`))['headSeq'] as number;
  }
  async headGseq(group: string): Promise<number> {
    return (await this.call('GET', `groups/default/${group}?memberLimit=1`))['headGseq'] as number;
  }
  async sumHeads(users: string[]): Promise<number> {
    return (await mapLimited(users, 64, (u) => this.headSeq(u))).reduce((a, b) => a + b, 0);
  }
}

/** Retries while the server sheds load; fails the bench on any other error. */
async function okRetrying(client: BenchClient, op: string, args: Json): Promise<Json> {
  for (let i = 0; ; i++) {
    const r = await client.call(op, args).reply;
    if (r.reply.ok) return r.reply;
    if (r.reply.error?.code !== 'OVERLOADED' || i > 100) throw new Error(`${op}: ${r.reply.error?.code} ${r.reply.error?.message}`);
    await sleep(50);
  }
}

/** Creates a group of `users` (users[0] creates it), adding members in frame-sized chunks. */
async function createGroup(owner: BenchClient, id: string, users: string[]): Promise<string> {
  const first = await okRetrying(owner, 'group.create', { name: id, group: id, members: users.slice(1, CHUNK) });
  let tier = first['tier'] as string;
  for (let i = CHUNK; i < users.length; i += CHUNK)
    tier = (await okRetrying(owner, 'group.add', { group: id, members: users.slice(i, i + CHUNK) }))['tier'] as string;
  return tier;
}

async function untilIdle(admin: Admin, timeoutMs = 120_000): Promise<number> {
  const end = performance.now() + timeoutMs;
  while (!(await admin.idle())) {
    if (performance.now() > end) throw new Error('queues never went idle');
    await sleep(2);
  }
  return performance.now();
}

/** Parent side of the swarm child (IPC, one request at a time). */
class Swarm {
  private waiter: ((m: Json) => void) | undefined;
  private constructor(private readonly proc: ChildProcess) {
    proc.on('message', (m: Json) => {
      const w = this.waiter;
      this.waiter = undefined;
      w?.(m);
    });
  }
  static async start(): Promise<Swarm> {
    const proc = fork(SWARM_CHILD, [], {
      execArgv: ['--conditions=source', '--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    process.once('exit', () => {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    });
    const swarm = new Swarm(proc);
    await swarm.next();
    return swarm;
  }
  private next(): Promise<Json> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('swarm: no reply in 180 s')), 180_000);
      this.waiter = (m) => {
        clearTimeout(timer);
        if (m['type'] === 'error') reject(new Error(String(m['message'])));
        else resolve(m);
      };
    });
  }
  ask(msg: object): Promise<Json> {
    const r = this.next();
    this.proc.send(msg);
    return r;
  }
  async close(): Promise<void> {
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.send({ cmd: 'close' });
    await Promise.race([exited, sleep(5000)]);
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}

async function writeFanout(server: ChildServer, admin: Admin, notes: string[]): Promise<Figure> {
  await admin.call('PUT', 'tiers', { largeBelow: WRITE_MEMBERS + 1 });
  const users = Array.from({ length: WRITE_MEMBERS }, (_, i) => `w${RUN_ID}u${i}`);
  const group = `w${RUN_ID}`;
  const sender = await BenchClient.connect(server.url, await tokenFor(users[0] as string));
  try {
    const tier = await createGroup(sender, group, users);
    if (tier !== 'large') throw new Error(`2 000-member group is ${tier}, expected large`);
    await untilIdle(admin);
    const times: number[] = [];
    for (let k = 0; k < WRITE_REPEATS; k++) {
      const appinfo = `wf-${RUN_ID}-${k}`;
      const { sentAt, reply } = sender.call('send', { appinfo, to: { group }, type: 'text', body: { text: `to ${WRITE_MEMBERS}` } });
      if (!(await reply).reply.ok) throw new Error(`send refused: ${(await reply).text}`);
      const done = await untilIdle(admin);
      // Verify, untimed: every member inbox holds the message (its head went up by one).
      const heads = await mapLimited(users.slice(1), 64, (u) => admin.call('GET', `inbox/default/${u}?after=0&limit=1000`));
      const missing = heads.filter((h) => !(h['entries'] as Array<{ appinfo: string }>).some((e) => e.appinfo === appinfo)).length;
      if (missing > 0) throw new Error(`${missing} member inboxes lack message ${k} after the queues went idle`);
      times.push(done - sentAt);
    }
    notes.push(
      `write-fanout: ${WRITE_MEMBERS}-member large group (largeBelow ${WRITE_MEMBERS + 1} set live), ${WRITE_REPEATS} single messages, each timed send → all queues/pools idle (admin API polled every ~2 ms), then all ${WRITE_MEMBERS - 1} inboxes checked`,
    );
    notes.push(`  completion times: ${times.map((t) => fmtMs(t)).join(', ')}`);
    const p50 = median(times);
    const max = Math.max(...times);
    return {
      name: `write-fanout ${WRITE_MEMBERS} members, send → all inboxes`,
      value: `p50 ${fmtMs(p50)}, max ${fmtMs(max)}`,
      target: '< 1 s',
      met: max < 1000,
    };
  } finally {
    await sender.close();
  }
}

async function readFanout(server: ChildServer, admin: Admin, notes: string[]): Promise<Figure[]> {
  await admin.call('PUT', 'tiers', { largeBelow: 500 });
  const figures: Figure[] = [];
  // Storage writes: a 1 000-member huge group, no sockets.
  const small = Array.from({ length: 1000 }, (_, i) => `h${RUN_ID}a${i}`);
  const owner = await BenchClient.connect(server.url, await tokenFor(small[0] as string));
  const writes = async (group: string, users: string[], send: () => Promise<void>) => {
    await untilIdle(admin);
    const [inboxes0, stream0] = [await admin.sumHeads(users), await admin.headGseq(group)];
    await send();
    await untilIdle(admin);
    const [inboxes1, stream1] = [await admin.sumHeads(users), await admin.headGseq(group)];
    return { inbox: inboxes1 - inboxes0, stream: stream1 - stream0 };
  };
  const g1k = `h${RUN_ID}k1`;
  if ((await createGroup(owner, g1k, small)) !== 'huge') throw new Error('1 000-member group is not huge');
  const w1k = await writes(g1k, small, async () => {
    await okRetrying(owner, 'send', { appinfo: `h1-${RUN_ID}`, to: { group: g1k }, type: 'text', body: { text: 'hi' } });
  });
  await owner.close();

  const users = Array.from({ length: READ_MEMBERS }, (_, i) => `h${RUN_ID}b${i}`);
  const group = `h${RUN_ID}k10`;
  const creator = await BenchClient.connect(server.url, await tokenFor(users[0] as string));
  if ((await createGroup(creator, group, users)) !== 'huge') throw new Error('10 000-member group is not huge');
  await creator.close();
  const swarm = await Swarm.start();
  try {
    const connected = await swarm.ask({ cmd: 'connect', url: server.url, users, secret: BENCH_SECRET, tenant: 'default' });
    if (connected['count'] !== READ_MEMBERS) throw new Error(`swarm connected ${String(connected['count'])} of ${READ_MEMBERS}`);
    const appinfo = `h10-${RUN_ID}`;
    let sent: Json = {};
    const w10k = await writes(group, users, async () => {
      sent = await swarm.ask({
        cmd: 'call',
        member: 0,
        op: 'send',
        args: { appinfo, to: { group }, type: 'text', body: { text: 'to everyone' } },
      });
      if ((sent['result'] as Json)['ok'] !== true) throw new Error(`send: ${JSON.stringify(sent['result'])}`);
    });
    const sendAt = sent['at'] as number;
    const ackMs = sent['ms'] as number;
    // group.history right after: the message is readable once the send is acked.
    const history: number[] = [];
    for (const member of [1, 2500, 5000, 7500, READ_MEMBERS - 1]) {
      const r = await swarm.ask({ cmd: 'call', member, op: 'group.history', args: { group, afterGseq: 0 } });
      const found = ((r['result'] as Json)['messages'] as Array<{ appinfo: string }> | undefined)?.some((m) => m.appinfo === appinfo);
      if (!found) throw new Error(`member ${member} cannot read the message: ${JSON.stringify(r['result']).slice(0, 200)}`);
      history.push(r['ms'] as number);
    }
    let pushes: Json = {};
    const end = Date.now() + 60_000;
    while (Date.now() < end) {
      pushes = await swarm.ask({ cmd: 'pushes', appinfo });
      if ((pushes['count'] as number) >= READ_MEMBERS) break;
      await sleep(20);
    }
    const pushCount = pushes['count'] as number;
    const pushMs = (pushes['last'] as number) - sendAt;
    const read = await swarm.ask({ cmd: 'readAll', group, appinfo });
    notes.push(
      `read-fanout: ${READ_MEMBERS}-member huge group, ${READ_MEMBERS} sockets in a child process (connected in ${String(connected['ms'])} ms)`,
    );
    notes.push(
      `  send → ack ${ackMs} ms (the stream append: readable from here); group.history by 5 members right after: ${history.map((h) => `${h} ms`).join(', ')}`,
    );
    notes.push(
      `  send → group.push on ${pushCount}/${READ_MEMBERS} sockets: ${pushMs} ms (Date.now resolution); every member sync + group.history: listed ${String(read['listed'])}, found ${String(read['found'])}, in ${String(read['ms'])} ms for all`,
    );
    notes.push(`storage writes per huge-group message (Σ inbox heads of all members incl. sender, group stream head, before → after):`);
    notes.push(
      `  1 000 members: inbox entries +${w1k.inbox}, stream entries +${w1k.stream}; 10 000 members: inbox entries +${w10k.inbox}, stream entries +${w10k.stream}`,
    );
    figures.push(
      { name: `read-fanout ${READ_MEMBERS}: send → readable (ack)`, value: `${ackMs} ms`, target: '< 1 s', met: ackMs < 1000 },
      {
        name: `read-fanout ${READ_MEMBERS}: send → push on all sockets`,
        value: `${pushMs} ms (${pushCount} sockets)`,
        target: '< 1 s',
        met: pushCount >= READ_MEMBERS && pushMs < 1000,
        raw: 'WeCom: 16 s',
      },
      {
        name: 'writes per huge-group message (1k / 10k members)',
        value: `${w1k.inbox + w1k.stream} / ${w10k.inbox + w10k.stream} entries`,
        target: 'constant (3)',
        met: w1k.inbox + w1k.stream === 3 && w10k.inbox + w10k.stream === 3,
      },
    );
    return figures;
  } finally {
    await swarm.close();
  }
}

export async function runLargeGroupsBench(): Promise<BenchResult> {
  const tmp = await tempDir('groups');
  const notes: string[] = [];
  let server: ChildServer | undefined;
  try {
    // Raised rate limits: group creation and the swarm's reads are many requests per user.
    server = await startSeqlineChild(join(tmp.dir, 'server'), { SEQLINE_RATE_PER_SEC: '100000', SEQLINE_RATE_BURST: '100000' });
    const admin = await Admin.of(server.port);
    const figures = [await writeFanout(server, admin, notes), ...(await readFanout(server, admin, notes))];
    return { figures, notes };
  } finally {
    await server?.stop();
    await tmp.remove();
  }
}
