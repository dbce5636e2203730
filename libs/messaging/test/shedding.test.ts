/** Load shedding at send, with an injected event-loop lag, over the real embedded engine. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxKey, messageKey, OverloadedError } from '@seqline/core';
import { createMessaging, type Messaging } from '../src/index.ts';
import { openEmbeddedRig, type EmbeddedRig } from './support/embedded-rig.ts';

let rig: EmbeddedRig;
let messaging: Messaging;
let lag = 0;
const alice = { tenant: 't', user: 'alice' };

beforeAll(async () => {
  rig = await openEmbeddedRig('shed', { loopLagMs: () => lag });
  messaging = createMessaging(rig.deps);
  await messaging.createGroup(alice, { name: 's', id: 'small', members: ['b'] });
  await messaging.createGroup(alice, { name: 'l', id: 'large', members: ['b', 'c'] });
  await messaging.createGroup(alice, { name: 'h', id: 'huge', members: ['b', 'c', 'd', 'e'] });
});
afterAll(async () => {
  await rig.close();
});

let k = 0;
async function outcome(to: { user: string } | { group: string }): Promise<'ok' | 'OVERLOADED'> {
  const appinfo = `shed-${++k}`;
  try {
    await messaging.send(alice, { appinfo, to, type: 'text', body: {} });
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(OverloadedError);
    // Refused before anything was stored: a later retry is a first send.
    expect((await rig.engine.timeline.findSeqs({ inbox: inboxKey('t', 'alice'), keys: [messageKey('alice', appinfo)] })).size).toBe(0);
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
