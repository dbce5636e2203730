/** The v1.1 conversation scenarios (./conversation-scenarios.ts) against the embedded server. */
import { describeConversations } from './conversation-scenarios.ts';
import { useEmbeddedServer } from './support/embedded-suite.ts';

const suite = useEmbeddedServer();

describeConversations('embedded', () => ({ connect: suite.connect, user: suite.user }));
