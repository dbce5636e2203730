/**
 * seqline-admin end to end: the real CLI process against an in-process embedded server, with
 * the admin token minted from the server's data dir as an operator would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTokenVerifier, issueToken } from '@seqline/protocol';
import { freePort } from '@seqline/testing';
import { runBin, runCli, startCliServer, waitFor, type CliServer } from './cli-harness.ts';

let s: CliServer;
beforeAll(async () => {
  s = await startCliServer();
});
afterAll(async () => {
  await s.stop();
});

const json = <T>(stdout: string) => JSON.parse(stdout) as T;

/** Creates a group over the client protocol (WebSocket), as a user would. */
async function createGroup(owner: string, id: string, members: string[]): Promise<void> {
  const token = await issueToken({ secret: s.secret, user: owner, ttlSeconds: 60 });
  const ws = new WebSocket(`ws://127.0.0.1:${s.server.port}/v1/ws`, { headers: { authorization: `Bearer ${token}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const reply = await new Promise<Record<string, unknown>>((resolve) => {
    ws.once('message', (data: WebSocket.RawData) => resolve(JSON.parse(String(data)) as Record<string, unknown>));
    ws.send(JSON.stringify({ id: 1, op: 'group.create', name: 'Ops room', members, group: id }));
  });
  ws.close();
  expect(reply).toMatchObject({ ok: true, group: id });
}

describe('seqline-admin limits and tiers', () => {
  it('limits set --large-group-concurrency 2: shown by limits show, and live in the server without restart', async () => {
    expect(s.server.settings.limits().largeGroupConcurrency).toBe(5);
    const set = await s.cli('limits', 'set', '--large-group-concurrency', '2');
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toMatch(/limits updated/);
    expect(set.stdout).toMatch(/large-group-concurrency\s+2/);
    const shown = await s.cli('limits', 'show', '--json');
    expect(shown.code).toBe(0);
    expect(json<{ limits: { largeGroupConcurrency: number }; version: number }>(shown.stdout).limits.largeGroupConcurrency).toBe(2);
    await waitFor(() => s.server.settings.limits().largeGroupConcurrency === 2, 3000, 'the server to use the new limit');
    // The worker pools read it on every scheduling decision: the bound in force is now 2.
    await waitFor(() => s.server.workers.stats().pools.large.perGroupLimit === 2, 3000, 'the large pool to use the new limit');
  });

  it('tiers set: a value the server rejects is exit 2 with its reason, and changes nothing', async () => {
    const before = json<{ version: number }>((await s.cli('tiers', 'show', '--json')).stdout);
    const bad = await s.cli('tiers', 'set', '--small-below', '5000');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/smallBelow \(5000\) must be below largeBelow \(2000\)/);
    expect(bad.stdout).toBe('');
    const tooBig = await s.cli('tiers', 'set', '--max-members', '200000');
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toMatch(/must not exceed 100000/);
    expect(json<{ version: number }>((await s.cli('tiers', 'show', '--json')).stdout).version).toBe(before.version);
  });

  it('tiers set: bad flags and no flags are usage errors (exit 2) before any request', async () => {
    const results = await Promise.all([
      s.cli('tiers', 'set'),
      s.cli('tiers', 'set', '--small-below', 'many'),
      s.cli('tiers', 'set', '--hysteresis', 'lots'),
      s.cli('limits', 'set', '--small-pool', '-3'),
      s.cli('tiers', 'frobnicate'),
    ]);
    for (const r of results) expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
    expect(results[0]?.stderr).toMatch(/give at least one of --small-below/);
    expect(results[1]?.stderr).toMatch(/--small-below <n>' argument 'many' is invalid/);
  });

  it('tiers set then show (table and JSON); the server applies it at once', async () => {
    const set = await s.cli('tiers', 'set', '--max-members', '100000', '--hysteresis', '0.2');
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/huge\s+up to 100000 members/);
    const shown = json<{ tiers: Record<string, number> }>((await s.cli('tiers', 'show', '--json')).stdout);
    expect(shown.tiers).toEqual({ smallBelow: 100, largeBelow: 2000, maxMembers: 100_000, hysteresis: 0.2 });
    expect(s.server.settings.tiers().maxMembers).toBe(100_000);
  });
});

describe('seqline-admin group, inbox, dead letters', () => {
  it('group show: tier, members, head, queue depth; unknown group is exit 1', async () => {
    await createGroup('alice', 'ops', ['bob', 'carol']);
    const shown = await s.cli('group', 'show', 'ops', '--json');
    expect(shown.code).toBe(0);
    const view = json<{ queue: { pools: Record<string, { perGroupLimit: number }>; pendingForGroup: number | null } }>(shown.stdout);
    expect(view).toMatchObject({
      id: 'ops',
      tenant: 'default',
      name: 'Ops room',
      nameRev: 0,
      tier: 'small',
      memberCount: 3,
      members: ['alice', 'bob', 'carol'],
      headGseq: 0,
    });
    expect(view.queue.pools.large?.perGroupLimit).toBe(s.server.settings.limits().largeGroupConcurrency);
    expect(view.queue.pendingForGroup).toEqual(expect.any(Number));
    const table = await s.cli('group', 'show', 'ops', '--members', '1');
    expect(table.stdout).toMatch(/tier\s+small/);
    expect(table.stdout).toMatch(/^pool\s+running\s+waiting\s+pool size\s+per-group limit$/m);
    expect(table.stdout).toMatch(/members \(1 of 3\):\nalice\n… more members: --members-after alice/);
    const missing = await s.cli('group', 'show', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/group nope not found/);
  });

  it('inbox USER --after N lists entries (the group event reaches every member)', async () => {
    await createGroup('dave', 'inbox-room', ['erin']);
    let entries: Array<{ seq: number; kind: string }> = [];
    await waitFor(
      async () => {
        const r = await s.cli('inbox', 'erin', '--after', '0', '--json');
        entries = json<{ entries: Array<{ seq: number; kind: string }> }>(r.stdout).entries;
        return entries.length > 0;
      },
      10_000,
      "the group event in erin's inbox",
    );
    expect(entries[0]?.kind).toBe('group');
    const after = await s.cli('inbox', 'erin', '--after', String(entries.at(-1)?.seq ?? 0));
    expect(after.stdout).toMatch(/no entries after seq/);
    const human = await s.cli('inbox', 'erin');
    expect(human.stdout).toMatch(/^inbox erin \(tenant default\): head seq \d+\nseq\s+kind/);
  });

  it('deadletters list on an empty set; replay of an unknown id is exit 1; replay needs ID or --all', async () => {
    const list = await s.cli('deadletters', 'list');
    expect(list).toMatchObject({ code: 0, stdout: 'no dead letters\n' });
    expect(json((await s.cli('deadletters', 'list', '--json')).stdout)).toEqual([]);
    const all = await s.cli('deadletters', 'replay', '--all', '--json');
    expect(all.code).toBe(0);
    expect(json(all.stdout)).toEqual({ replayed: [], missing: [] });
    const unknown = await s.cli('deadletters', 'replay', 'no-such-job');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no dead letter no-such-job/);
    expect((await s.cli('deadletters', 'replay')).code).toBe(2);
    expect((await s.cli('deadletters', 'replay', 'x', '--all')).code).toBe(2);
  });
});

describe('seqline-admin credentials and reachability', () => {
  it('a user token is refused (403 → exit 1); a wrong data dir is a clear usage error', async () => {
    const userToken = await issueToken({ secret: s.secret, user: 'alice', ttlSeconds: 60 });
    const refused = await runCli(['--url', s.url, '--admin-token', userToken, 'limits', 'show']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not an admin token/);
    const noSecret = await runCli(['--url', s.url, '--data-dir', '/nonexistent/seqline', 'limits', 'show']);
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toMatch(/no admin credentials: .*secret does not exist/);
    const wrongSecret = await runCli(['--url', s.url, 'limits', 'show'], { SEQLINE_SECRET: 'a-different-secret-0123456789' });
    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stderr).toMatch(/401/);
  });

  it('token issue works without a server; an admin token from it is accepted by the admin API', async () => {
    const user = await s.cli('token', 'issue', '--user', 'alice', '--json');
    expect(user.code).toBe(0);
    const { token } = json<{ token: string }>(user.stdout);
    expect(createTokenVerifier(s.secret)(token)).toMatchObject({ user: 'alice', tenant: 'default' });
    const admin = await s.cli('token', 'issue', '--admin', '--ttl', '5m');
    expect(admin.code).toBe(0);
    const viaToken = await runCli(['--url', s.url, '--data-dir', '/nonexistent', 'limits', 'show', '--json'], {
      SEQLINE_ADMIN_TOKEN: admin.stdout.trim(),
    });
    expect(viaToken.code).toBe(0);
    expect((await s.cli('token', 'issue')).code).toBe(2);
    expect((await s.cli('token', 'issue', '--user', 'a:b')).code).toBe(2);
  });

  it('a server that is not running is exit 3', async () => {
    const r = await runCli(['--url', `http://127.0.0.1:${await freePort()}`, '--admin-token', 'x', 'tiers', 'show']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot reach the server at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });
});

describe('seqline-admin --help (spawned; every command is covered in-process in cli-program.test.ts)', () => {
  // The bin runs the built JS: the first run in a clean clone builds the workspace (bounded).
  it('the bin (built JS) and the TypeScript entry both print help and exit 0', async () => {
    const [bin, nested] = await Promise.all([runBin(['--help']), runCli(['schema', 'migrate', '--help'])]);
    expect(bin.code).toBe(0);
    expect(bin.stdout).toContain('Usage: seqline-admin [options] [command]');
    expect(nested.code).toBe(0);
    expect(nested.stdout).toContain('Usage: seqline-admin schema migrate [options]');
  }, 240_000);
});
