/**
 * Conversation titles and group.rename (./group-title-scenarios.ts) against the embedded server;
 * the tiers are lowered live so that 3 or 4 members make a write-fanout group and 5 a huge one.
 */
import { expect } from 'vitest';
import { describeGroupTitles } from './group-title-scenarios.ts';
import { useEmbeddedServer } from './support/embedded-suite.ts';

const suite = useEmbeddedServer({ settings: { tiers: { smallBelow: 3, largeBelow: 5, hysteresis: 0 } } });

describeGroupTitles('embedded', () => ({
  connect: suite.connect,
  user: suite.user,
  async hugeGroup(owner, members) {
    const fillers = [suite.user('off'), suite.user('off')];
    const r = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'huge', members: [...members, ...fillers] });
    expect(r.tier).toBe('huge');
    return { group: r.group, offlineMember: fillers[0]! };
  },
}));
