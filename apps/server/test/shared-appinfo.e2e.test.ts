/** Two senders, one appinfo, one recipient: against the embedded server (scenarios in shared-appinfo-scenarios.ts). */
import { expect } from 'vitest';
import { DEFAULT_TIER_THRESHOLDS } from '@seqline/core';
import { describeSharedAppinfo } from './shared-appinfo-scenarios.ts';
import { useEmbeddedServer } from './support/embedded-suite.ts';

const suite = useEmbeddedServer();

describeSharedAppinfo('embedded', () => ({
  user: suite.user,
  connect: suite.connect,
  // Tiers lowered live for the creation only: a group's tier is decided when it is created.
  async hugeGroup(owner, members) {
    await suite.server.settings.update({ tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } });
    try {
      const r = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'huge', members });
      expect(r.tier).toBe('huge');
      return r.group;
    } finally {
      await suite.server.settings.update({ tiers: DEFAULT_TIER_THRESHOLDS });
    }
  },
}));
