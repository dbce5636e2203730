/**
 * Hooks bench: what the app's hooks cost a send, on `npm start` in a child process, against a
 * real HTTP receiver in this process (it verifies every signature). Three servers, same load:
 * no hooks; a before-send hook that allows; every hook (before-send, after-send, offline
 * notifications to recipients who are never connected). Raw limit measured in the same run: a
 * bare signed POST round trip to the same receiver at the same concurrency — the least a
 * before-send hook can add to a send.
 */
import { performance } from 'node:perf_hooks';
import { createHttpHookTransport } from '@seqline/hooks';
import { startHookReceiver, type HookReceiver } from '@seqline/testing';
import { messageBody, RUN_ID } from './fixtures.ts';
import { fmtLatency, fmtMs, fmtRate, Samples, type BenchResult, type Figure, type LatencySummary } from './stats.ts';
import { mapLimited, sleep, startSeqlineChild, tempDir, type ChildServer } from './support.ts';
import { BenchClient, tokenFor } from './ws-client.ts';

const SECRET = 'bench-hook-secret-0123456789';
const SENDERS = 16;
/** Sends in flight per sender socket (closed loop). */
const PER_SENDER = 2;
const WARMUP_MS = 1500;
const MEASURE_MS = 6000;
/** Recipients never connect: every message is for an offline user. */
const RECIPIENTS = 64;

interface LoadFigures {
  sends: number;
  perSecond: number;
  ack: LatencySummary;
  errors: number;
}

async function sendLoad(server: ChildServer, tag: string, ms: number): Promise<LoadFigures> {
  const senders = await mapLimited(
    Array.from({ length: SENDERS }, (_, i) => `hk-${tag}-s${i}`),
    8,
    async (user) => BenchClient.connect(server.url, await tokenFor(user)),
  );
  const ack = new Samples(200_000);
  let sends = 0;
  let errors = 0;
  let next = 0;
  const end = performance.now() + ms;
  const lane = async (client: BenchClient) => {
    while (performance.now() < end) {
      const i = next++;
      const { sentAt, reply } = client.call('send', {
        to: { user: `hk-${tag}-r${i % RECIPIENTS}` },
        appinfo: `hk-${RUN_ID}-${tag}-${i}`,
        type: 'text',
        body: messageBody(),
      });
      const r = await reply;
      if (r.reply.ok) {
        ack.add(r.at - sentAt);
        sends++;
      } else errors++;
    }
  };
  const t0 = performance.now();
  await Promise.all(senders.flatMap((c) => Array.from({ length: PER_SENDER }, () => lane(c))));
  const elapsed = performance.now() - t0;
  await Promise.all(senders.map((c) => c.close()));
  return { sends, perSecond: (sends * 1000) / elapsed, ack: ack.summary(), errors };
}

/** The raw layer: a signed POST and its 2xx answer, same concurrency, same receiver. */
async function rawPosts(receiver: HookReceiver, ms: number): Promise<LatencySummary> {
  const transport = createHttpHookTransport();
  const samples = new Samples(200_000);
  const end = performance.now() + ms;
  const body = JSON.stringify({
    type: 'before_send',
    tenant: 'default',
    from: 'a',
    to: { user: 'b' },
    appinfo: 'x',
    msgType: 'text',
    body: messageBody(),
  });
  const lane = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await transport.post({ url: receiver.url, secret: SECRET, body, timeoutMs: 5000 });
      samples.add(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: SENDERS * PER_SENDER }, lane));
  return samples.summary();
}

async function withServer<T>(env: Record<string, string>, run: (server: ChildServer) => Promise<T>): Promise<T> {
  const dir = await tempDir('seqline-bench-hooks-');
  const server = await startSeqlineChild(dir.dir, env);
  try {
    return await run(server);
  } finally {
    await server.stop();
    await dir.remove();
  }
}

async function measure(env: Record<string, string>, tag: string): Promise<LoadFigures> {
  return withServer(env, async (server) => {
    await sendLoad(server, `${tag}w`, WARMUP_MS);
    return sendLoad(server, tag, MEASURE_MS);
  });
}

export async function runHooksBench(): Promise<BenchResult> {
  const receiver = await startHookReceiver({ secret: SECRET, mode: { kind: 'answer', answer: () => ({ allow: true }) } });
  try {
    const plain = await measure({}, 'plain');
    const before = await measure({ SEQLINE_HOOK_SECRET: SECRET, SEQLINE_BEFORE_SEND_URL: receiver.url }, 'before');
    const callsBefore = receiver.calls.length;
    const all = await measure(
      {
        SEQLINE_HOOK_SECRET: SECRET,
        SEQLINE_BEFORE_SEND_URL: receiver.url,
        SEQLINE_AFTER_SEND_URL: receiver.url,
        SEQLINE_NOTIFY_URL: receiver.url,
      },
      'all',
    );
    await sleep(3000); // the last notification windows close and their jobs run
    const kinds = new Map<string, number>();
    for (const call of receiver.calls.slice(callsBefore)) {
      const type = (call.json as { type?: string } | undefined)?.type ?? 'invalid';
      kinds.set(type, (kinds.get(type) ?? 0) + 1);
    }
    const raw = await rawPosts(receiver, MEASURE_MS / 2);
    const rejected = receiver.calls.filter((c) => !c.verdict.ok).length;
    const added = before.ack.p50 - plain.ack.p50;
    const figures: Figure[] = [
      {
        name: 'send p50 with a before-send hook, vs without',
        value: `${fmtMs(before.ack.p50)} vs ${fmtMs(plain.ack.p50)}`,
        target: 'info',
        met: undefined,
        raw: `signed POST p50 ${fmtMs(raw.p50)}`,
        ratio: `adds ${(added / raw.p50).toFixed(2)}× a raw POST`,
      },
      {
        name: 'send throughput with a before-send hook / without',
        value: `${fmtRate(before.perSecond)} / ${fmtRate(plain.perSecond)}`,
        target: 'info',
        met: undefined,
        ratio: `${(before.perSecond / plain.perSecond).toFixed(2)}× no hooks`,
      },
      {
        name: 'send throughput with every hook / without',
        value: `${fmtRate(all.perSecond)} / ${fmtRate(plain.perSecond)}`,
        target: 'info',
        met: undefined,
        ratio: `${(all.perSecond / plain.perSecond).toFixed(2)}× no hooks`,
      },
    ];
    return {
      figures,
      notes: [
        `${SENDERS} sender sockets × ${PER_SENDER} sends in flight, 1:1 to ${RECIPIENTS} never-connected recipients, ${MEASURE_MS / 1000} s each; the receiver runs in this process and verifies every signature`,
        `no hooks:      ${fmtLatency(plain.ack)}, ${plain.errors} errors`,
        `before-send:   ${fmtLatency(before.ack)}, ${before.errors} errors`,
        `every hook:    ${fmtLatency(all.ack)}, ${all.errors} errors`,
        `raw POST:      ${fmtLatency(raw)}`,
        `every-hook run: ${all.sends} sends (+ warm-up) → calls received: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}; bad signatures ${rejected}`,
      ],
    };
  } finally {
    await receiver.close();
  }
}
