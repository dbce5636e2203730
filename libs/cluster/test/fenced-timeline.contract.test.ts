/**
 * The TimelineStore decorator contract for the fence a shard owner writes through: every field
 * of an append reaches the store, the lease checked in the guard it hands on.
 */
import { timelineDecoratorContract } from '@seqline/testing';
import { FencedTimelineWriter } from '../src/index.ts';

timelineDecoratorContract('fenced timeline (lease held)', async (inner) => ({
  store: new FencedTimelineWriter(inner, 3, () => undefined, 7),
  close: async () => {},
}));
