/** The v1.1 conversation attacks (./hostile/conversation-attacks.ts) against the embedded server. */
import { describeConversationAttacks } from './hostile/conversation-attacks.ts';
import { useEmbeddedServer } from './support/embedded-suite.ts';

const suite = useEmbeddedServer();

describeConversationAttacks(
  'embedded',
  () => ({ connect: suite.connect, user: suite.user }),
  () => suite.server.clock,
);
