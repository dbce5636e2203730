/** Appinfo ownership and rights-when-used attacks against the embedded server (scenarios in hostile/). */
import { describe, expect, it } from 'vitest';
import { waitFor } from './harness.ts';
import { describeAppinfoAttacks } from './hostile/appinfo-attacks.ts';
import { useEmbeddedServer } from './support/embedded-suite.ts';

const suite = useEmbeddedServer();

describeAppinfoAttacks('embedded', () => ({ user: suite.user, connect: suite.connect }));

describe('data stored before the appinfo rules (embedded)', () => {
  it('a message whose appinfo has a ":" stays readable and recallable by its sender; the appinfo cannot be sent again', async () => {
    // Written as an earlier version would have: through messaging, past today's wire validation.
    const legacy = 'legacy:0001';
    await suite.server.messaging.send(
      { tenant: 'default', user: 'lg-alice' },
      { appinfo: legacy, to: { user: 'lg-bob' }, type: 'text', body: { text: 'old' } },
    );
    const [alice, bob] = [await suite.connect('lg-alice'), await suite.connect('lg-bob')];
    expect((await bob.syncAll()).map((e) => [e.appinfo, e.body])).toEqual([[legacy, { text: 'old' }]]);
    expect(await alice.call('send', { appinfo: legacy, to: { user: 'lg-bob' }, type: 'text', body: {} })).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
    expect(await bob.call('recall', { appinfo: legacy })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    await alice.ok('recall', { appinfo: legacy });
    await waitFor(async () => (await bob.syncAll()).some((e) => e.kind === 'recall' && e.recall?.appinfo === legacy));
    // A server entry named by its appinfo is never a message to recall.
    expect(await alice.call('recall', { appinfo: `recall:${legacy}` })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });
});
