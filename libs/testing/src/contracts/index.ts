export { timelineStoreContract } from './timeline.contract.ts';
export {
  conversationIndexContract,
  type ConversationIndexContractOptions,
  type ConversationStores,
} from './conversation-index.contract.ts';
export { groupStoreContract } from './groups.contract.ts';
export { groupStreamStoreContract } from './group-stream.contract.ts';
export { seqCeilingStoreContract } from './ceilings.contract.ts';
export { jobStoreContract } from './jobs.contract.ts';
export { settingsStoreContract } from './settings.contract.ts';
export { inboxWriterContract, type InboxWriterRig } from './inbox-writer.contract.ts';
export { groupStreamAppenderContract, type GroupStreamAppenderRig } from './group-stream-appender.contract.ts';
export { acrossReopen, msgEntry, uniqueName, uniqueTenant, type OpenedStore, type StoreOpener } from './harness.ts';
// Bus port suites (maintained with libs/bus); bus.ts's uniqueName duplicates harness.ts's.
export { eventually, workQueueContract, type OpenWorkQueue } from './bus.ts';
export { pushBusContract, type OpenPushBus } from './push-bus.contract.ts';
