/** Load shedding at send, with an injected event-loop lag, over the real embedded engine. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, inboxKey, OverloadedError, silentLogger, systemClock } from '@seqline/core';
import { createLocalPushBus, createLocalWorkQueue } from '@seqline/bus';
import { GroupStreamWriter, InboxOwner } from '@seqline/seq';
import { openEmbeddedEngine, type EmbeddedEngine } from '@seqline/store';
import { createMessaging, type Messaging } from '../src/index.ts';

const root = mkdtempSync(join(tmpdir(), 'seqline-shed-'));
let engine: EmbeddedEngine;
let messaging: Messaging;
let owner: InboxOwner;
let queue: ReturnType<typeof createLocalWorkQueue>;
let lag = 0;
const alice = { tenant: 't', user: 'alice' };

beforeAll(async () => {
  engine = await openEmbeddedEngine({ dir: root });
  const push = createLocalPushBus();
  owner = new InboxOwner({ timeline: engine.timeline, ceilings: engine.ceilings, push, logger: silentLogger, epoch: await engine.ceilings.nextEpoch('inbox-owner') });
  const groupWriter = new GroupStreamWriter({ streams: engine.groupStreams, ceilings: engine.ceilings, logger: silentLogger, epoch: await engine.ceilings.nextEpoch('group-writer') });
  messaging = createMessaging({
    writer: owner, timeline: engine.timeline, groups: engine.groups, groupStreams: engine.groupStreams, groupWriter,
    queue: (queue = createLocalWorkQueue({ jobs: engine.jobs, logger: silentLogger })), push, logger: silentLogger, clock: systemClock,
    tiers: () => ({ smallBelow: 3, largeBelow: 5, maxMembers: 100, hysteresis: 0 }), limits: () => DEFAULT_LIMITS,
    readFanout: true, newId: () => `id-${Math.random().toString(36).slice(2)}`, loopLagMs: () => lag,
  });
  await messaging.createGroup(alice, { name: 's', id: 'small', members: ['b'] });
  await messaging.createGroup(alice, { name: 'l', id: 'large', members: ['b', 'c'] });
  await messaging.createGroup(alice, { name: 'h', id: 'huge', members: ['b', 'c', 'd', 'e'] });
});
afterAll(async () => { await queue.close(); await owner.close(); await engine.close(); rmSync(root, { recursive: true, force: true }); });

let k = 0;
async function outcome(to: { user: string } | { group: string }): Promise<'ok' | 'OVERLOADED'> {
  const appinfo = `shed-${++k}`;
  try {
    await messaging.send(alice, { appinfo, to, type: 'text', body: {} });
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(OverloadedError);
    // Refused before anything was stored: a later retry is a first send.
    expect((await engine.timeline.findSeqs(inboxKey('t', 'alice'), [appinfo])).size).toBe(0);
    return 'OVERLOADED';
  }
}

async function admitted(): Promise<Record<string, string>> {
  return {
    direct: await outcome({ user: 'bob' }),
    small: await outcome({ group: 'small' }),
    large: await outcome({ group: 'large' }),
    huge: await outcome({ group: 'huge' }),
  };
}

describe('load shedding at send', () => {
  it('sheds huge-group sends first, then large, keeping 1:1 and small groups longest', async () => {
    expect((await messaging.groupInfo(alice, 'huge')).tier).toBe('huge');
    lag = 0;
    expect(await admitted()).toEqual({ direct: 'ok', small: 'ok', large: 'ok', huge: 'ok' });
    lag = 60;
    expect(await admitted()).toEqual({ direct: 'ok', small: 'ok', large: 'ok', huge: 'OVERLOADED' });
    lag = 120;
    expect(await admitted()).toEqual({ direct: 'ok', small: 'ok', large: 'OVERLOADED', huge: 'OVERLOADED' });
    lag = 1000;
    expect(await admitted()).toEqual({ direct: 'OVERLOADED', small: 'OVERLOADED', large: 'OVERLOADED', huge: 'OVERLOADED' });
    lag = 0;
    expect(await admitted()).toEqual({ direct: 'ok', small: 'ok', large: 'ok', huge: 'ok' });
  });
});
