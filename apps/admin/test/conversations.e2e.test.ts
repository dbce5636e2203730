/**
 * `seqline-admin inbox USER --conversations` and `seqline-admin conversations rebuild USER`
 * end to end on the embedded server: the real CLI process, the admin API, the inbox owner's
 * queue and the LMDB index. An index row tampered with on disk (the server stopped, as an
 * operator's bad restore or a bug would leave it) is reported against the recount, fixed by
 * the rebuild, and a second rebuild finds nothing to fix.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Key } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@seqline/core';
import { loadServerConfig, startEmbeddedServer, type RunningServer } from '@seqline/server';
import { appinfo, SECRET, TestClient } from '../../server/test/harness.ts';
import { runCli } from './cli-harness.ts';

interface Difference {
  conversation: string;
  field: string;
  index: number | null;
  recount: number | null;
}
interface View {
  headSeq: number;
  conversations: Array<{ conv: { type: string; id: string }; unread: number; last: { seq: number } | null }>;
  check: { exact: boolean; asOfSeq: number; entries: number; differences: Difference[] };
}

let dataDir: string;
let server: RunningServer;
const start = async () => {
  const config = await loadServerConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEQLINE_DATA_DIR: dataDir,
    SEQLINE_SECRET: SECRET,
    SEQLINE_RATE_PER_SEC: '100000',
    SEQLINE_RATE_BURST: '100000',
  });
  server = await startEmbeddedServer(config, silentLogger);
};
const cli = (...args: string[]) => runCli(['--url', `http://127.0.0.1:${server.port}`, ...args], { SEQLINE_SECRET: SECRET });
const view = async (user: string): Promise<View> => {
  const r = await cli('inbox', user, '--conversations', '--json');
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as View;
};

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'seqline-admin-convs-'));
  await start();
});
afterAll(async () => {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Stops the server, edits bob's stored index record in LMDB, starts it again on the same data. */
async function tamperUnread(inbox: string, convKey: string, add: number): Promise<void> {
  await server.close();
  const env = open({ path: join(dataDir, 'db'), noSubdir: false, maxDbs: 40 });
  try {
    const rows = env.openDB<number[], Key>({ name: 'conv_index' });
    const record = rows.get([inbox, 'r', convKey]);
    if (record === undefined) throw new Error(`no index record ${convKey} in ${inbox}`);
    // The record row is [lastSeq, lastMsgSeq, readSeq, clearedSeq, unread, mentions, asOfSeq].
    await rows.put(
      [inbox, 'r', convKey],
      record.map((n, i) => (i === 4 ? n + add : n)),
    );
  } finally {
    await env.close();
  }
  await start();
}

describe('seqline-admin conversations (embedded)', () => {
  it('inbox --conversations shows the index exact; a tampered row is reported; rebuild fixes it, then finds nothing', async () => {
    const alice = await TestClient.connect(`ws://127.0.0.1:${server.port}/v1/ws`, 'alice');
    const carol = await TestClient.connect(`ws://127.0.0.1:${server.port}/v1/ws`, 'carol');
    for (const text of ['one', 'two', 'three'])
      await alice.ok('send', { appinfo: appinfo(), to: { user: 'bob' }, type: 'text', body: { text } });
    await carol.ok('send', { appinfo: appinfo(), to: { user: 'bob' }, type: 'text', body: { text: 'hi bob' } });
    alice.close();
    carol.close();

    const before = await view('bob');
    expect(before.check).toEqual({ exact: true, asOfSeq: before.headSeq, entries: 4, differences: [] });
    expect(before.conversations.map((c) => [c.conv.id, c.unread])).toEqual([
      ['carol', 1],
      ['alice', 3],
    ]);
    const human = await cli('inbox', 'bob', '--conversations');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /^conversations of bob \(tenant default\): 2, inbox head seq 4\nconversation\s+lastSeq\s+readSeq\s+unread/,
    );
    expect(human.stdout).toMatch(/^user:alice\s+3\s+0\s+3\s+0\s+0\s+3\s+#3 alice: \{"text":"three"\}$/m);
    expect(human.stdout).toMatch(/index: exact as of seq 4 \(a recount of 4 entries agrees\)/);

    await tamperUnread('default:bob', 'user:alice', 5);
    const tampered = await view('bob');
    expect(tampered.check.exact).toBe(false);
    expect(tampered.check.differences).toEqual([{ conversation: 'user:alice', field: 'unread', index: 8, recount: 3 }]);
    const humanDiff = await cli('inbox', 'bob', '--conversations');
    expect(humanDiff.stdout).toMatch(
      /index: DIFFERS from a recount of 4 entries at seq 4:\nconversation\s+field\s+index\s+recount\nuser:alice\s+unread\s+8\s+3/,
    );

    const rebuilt = await cli('conversations', 'rebuild', 'bob');
    expect(rebuilt).toMatchObject({ code: 0, stderr: '' });
    expect(rebuilt.stdout).toMatch(
      /rebuilt the conversation index of bob \(tenant default\): 2 conversations from 4 entries, exact as of seq 4/,
    );
    expect(rebuilt.stdout).toMatch(/it DIFFERED and is fixed; 1 conversation\(s\) changed: user:alice/);
    const after = await view('bob');
    expect(after.check.exact).toBe(true);
    expect(after.conversations.find((c) => c.conv.id === 'alice')?.unread).toBe(3);

    const again = await cli('conversations', 'rebuild', 'bob', '--json');
    expect(JSON.parse(again.stdout)).toEqual({
      tenant: 'default',
      user: 'bob',
      differed: false,
      changedConversations: [],
      conversations: 2,
      entries: 4,
      headSeq: 4,
    });
  });

  it('bad ids are usage errors (exit 2) and change nothing; an inbox with nothing is exact at 0', async () => {
    for (const args of [
      ['conversations', 'rebuild', 'a:b'],
      ['inbox', 'bob', '--conversations', '--tenant', 'x y'],
      ['conversations', 'rebuild', 'bob', '--tenant', 't:1'],
    ]) {
      const r = await cli(...args);
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/invalid id/);
    }
    const empty = await view('nobody');
    expect(empty).toMatchObject({ headSeq: 0, conversations: [], check: { exact: true, asOfSeq: 0, entries: 0, differences: [] } });
    expect((await view('bob')).check.exact).toBe(true);
  });
});
