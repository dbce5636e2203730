/**
 * Read-fanout groups in the conversation list (./group-conversation-scenarios.ts) against the
 * embedded server; the tiers are lowered live so that a 3-member group is huge.
 */
import { expect } from 'vitest';
import { describeGroupConversations } from './group-conversation-scenarios.ts';
import { useEmbeddedServer } from './support/embedded-suite.ts';

const suite = useEmbeddedServer({ settings: { tiers: { smallBelow: 2, largeBelow: 3, hysteresis: 0 } } });

describeGroupConversations('embedded', () => ({
  connect: suite.connect,
  user: suite.user,
  async hugeGroup(owner, members) {
    const r = await owner.ok<{ group: string; tier: string }>('group.create', { name: 'huge', members });
    expect(r.tier).toBe('huge');
    return r.group;
  },
}));
