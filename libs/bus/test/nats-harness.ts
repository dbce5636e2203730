import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** Connects, or explains why not. REQUIRE_SERVICES=1 turns "no server" into a failure. */
export async function probeNats(): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    const nc = await connect({ servers: NATS_URL, timeout: 2_000, reconnect: false });
    try {
      await (await jetstreamManager(nc)).getAccountInfo();
    } finally {
      await nc.close();
    }
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `no JetStream-enabled NATS server at ${NATS_URL} (${err instanceof Error ? err.message : String(err)})` };
  }
}

export function connectNats(name: string): Promise<NatsConnection> {
  return connect({ servers: NATS_URL, name, timeout: 2_000 });
}

/** Per-run stream/subject names, so runs sharing one server never see each other's jobs. */
export function isolatedTopology(): { streamPrefix: string; subjectPrefix: string } {
  const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 7)}`;
  return { streamPrefix: `SEQLINE_TEST_${tag.toUpperCase()}`, subjectPrefix: `test${tag}.` };
}

export async function deleteStreams(streamPrefix: string): Promise<void> {
  const nc = await connectNats('seqline-test-cleanup');
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of [`${streamPrefix}_JOBS`, `${streamPrefix}_DLQ`, `${streamPrefix}_JOB_FAILURES`])
      await jsm.streams.delete(name).catch(() => false);
  } finally {
    await nc.close();
  }
}
