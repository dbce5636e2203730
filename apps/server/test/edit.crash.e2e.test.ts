/**
 * An edit is resumable across kill -9 (embedded, the real server process). The server is
 * SIGKILLed from inside (support/kill-at-enqueue.mjs) exactly when the edit's fanout job is
 * about to be stored: the edit entry is durable in the editor's inbox, no copy has it. After a
 * restart, the client's retry with the same editId finds the stored edit, answers its seq and
 * redoes the fanout: every member shows the edit, exactly once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ChildServer, freePort } from './child-server.ts';
import { appinfo, TestClient, waitFor, type WireEntry } from './harness.ts';

const KILL_AT_ENQUEUE = fileURLToPath(new URL('./support/kill-at-enqueue.mjs', import.meta.url));
const open: TestClient[] = [];
const dirs: string[] = [];
let server: ChildServer | undefined;

afterAll(async () => {
  for (const c of open) c.close();
  await server?.kill9();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function connectAll(srv: ChildServer, users: string[]): Promise<TestClient[]> {
  const clients = await Promise.all(users.map((u) => TestClient.connect(srv.url, u)));
  open.push(...clients);
  return clients;
}

const editsOf = (entries: WireEntry[], message: string) =>
  entries.filter((e) => e.kind === 'edit' && (e as { edit?: { appinfo: string } }).edit?.appinfo === message);

describe('edit across kill -9 (embedded)', () => {
  it('killed between the edit entry and its fanout job: the retry by editId delivers it to every member once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seqline-edit-crash-'));
    dirs.push(dir);
    const port = await freePort();
    const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --import=${KILL_AT_ENQUEUE}`.trim();
    server = new ChildServer(port, dir, { NODE_OPTIONS: nodeOptions, SEQLINE_TEST_KILL_AT_JOB: 'edit:' });
    await server.start();
    const [alice, bob, carol] = await connectAll(server, ['alice', 'bob', 'carol']);
    const { group } = await alice!.ok<{ group: string }>('group.create', { name: 'crew', members: ['bob', 'carol'] });
    const m = appinfo();
    await alice!.ok('send', { appinfo: m, to: { group }, type: 'text', body: { text: 'teh' } });
    for (const c of [bob!, carol!]) {
      await waitFor(async () => (await c.syncAll()).some((e) => e.appinfo === m), 15_000, `${c.user} holds the message`);
    }

    const editId = appinfo();
    const edit = { appinfo: m, body: { text: 'the' }, editId };
    void alice!.call('edit', edit); // never answered: the process dies first
    await server.exited();

    server = new ChildServer(port, dir);
    await server.start();
    const [alice2, bob2, carol2] = await connectAll(server, ['alice', 'bob', 'carol']);
    // The crash window was hit: the edit is stored for alice, and nowhere else.
    const stored = editsOf(await alice2!.syncAll(), m);
    expect(stored).toHaveLength(1);
    expect(editsOf(await bob2!.syncAll(), m)).toEqual([]);

    const retried = await alice2!.ok<{ seq: number }>('edit', edit);
    expect(retried.seq).toBe(stored[0]!.seq);
    for (const c of [bob2!, carol2!]) {
      const conv = await waitFor(
        async () => {
          const r = await c.ok<{ convs: Array<{ conv: { id: string }; last: { appinfo: string; body: unknown } | null }> }>(
            'conversations',
            {},
          );
          const found = r.convs.find((x) => x.conv.id === group);
          return found?.last?.appinfo === m && JSON.stringify(found.last.body) === JSON.stringify({ text: 'the' }) ? found : undefined;
        },
        15_000,
        `${c.user} shows the edit`,
      );
      expect(conv.last?.body).toEqual({ text: 'the' });
      expect(editsOf(await c.syncAll(), m)).toHaveLength(1);
    }
    expect(editsOf(await alice2!.syncAll(), m)).toHaveLength(1);
  }, 120_000);
});
