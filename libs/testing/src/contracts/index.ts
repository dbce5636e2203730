export { timelineStoreContract, type TimelineContractOptions } from './timeline.contract.ts';
export type { PreviousLayoutWriter } from './seq-log-port.ts';
export { indexedOf, ListeningTimeline, timelineDecoratorContract, type DecoratorRig } from './timeline-decorator.contract.ts';
export {
  conversationIndexContract,
  type ConversationIndexContractOptions,
  type ConversationStores,
} from './conversation-index.contract.ts';
export { JumpingClock, type ClockedOpener } from './conversation-index-clocks.ts';
export { appendAndCheck, expectIndexMatchesInbox, InboxModel, truncatedTimeline, type HistoryStep } from './conversation-index.oracle.ts';
export {
  conversationRebuildFaultContract,
  type RebuildFaultContractOptions,
  type RebuildFaultRig,
} from './conversation-rebuild.contract.ts';
export { groupStoreContract } from './groups.contract.ts';
export { groupStreamStoreContract, type GroupStreamContractOptions } from './group-stream.contract.ts';
export { seqCeilingStoreContract } from './ceilings.contract.ts';
export { jobStoreContract } from './jobs.contract.ts';
export { settingsStoreContract } from './settings.contract.ts';
export { holdStoreContract, type HoldStoreContractOptions } from './hold-store.contract.ts';
export { inboxWriterContract, type InboxWriterRig } from './inbox-writer.contract.ts';
export { inboxWriterDecoratorContract, ListeningInboxWriter, type InboxWriterDecoratorRig } from './inbox-writer-decorator.contract.ts';
export { groupStreamAppenderContract, type GroupStreamAppenderRig } from './group-stream-appender.contract.ts';
export {
  groupStreamAppenderDecoratorContract,
  ListeningGroupAppender,
  type GroupAppenderDecoratorRig,
} from './group-stream-appender-decorator.contract.ts';
export { acrossReopen, dup, MSG_FROM, msgEntry, msgKey, uniqueName, uniqueTenant, type OpenedStore, type StoreOpener } from './harness.ts';
// Bus port suites (maintained with libs/bus); bus.ts's uniqueName duplicates harness.ts's.
export { eventually, workQueueContract, type OpenWorkQueue } from './bus.ts';
export { ListeningWorkQueue, workQueueDecoratorContract } from './work-queue-decorator.contract.ts';
export { pushBusContract, type OpenPushBus } from './push-bus.contract.ts';
export { deviceBusContract, type DeviceBusRig, type DeviceBusTestOptions, type RigGateway } from './device-bus.contract.ts';
export { HolderDouble, recordingLogger, type TellMode } from './device-holder-double.ts';
