/** The tests' gated work queue passes every call on whole to the real queue it wraps. */
import { workQueueDecoratorContract } from '@seqline/testing';
import { heldQueue } from './support/held-queue.ts';

workQueueDecoratorContract('held queue (tests)', (inner) => heldQueue(inner).queue);
