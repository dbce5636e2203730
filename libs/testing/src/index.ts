/** Port contract suites (vitest): every adapter of a port runs the same suite. */
export * from './contracts/index.ts';
export * from './conversation-history.ts';
export { type ModelCaller, type ModelConvState, type ModelMessaging, type ModelOp } from './copy-holders/model.ts';
export { type ModelPush } from './copy-holders/oracle.ts';
export { type ModelStores } from './copy-holders/model.ts';
export {
  addCopyHolderCounts,
  copyHolderRunArb,
  PINNED_COPY_HOLDER_RUNS,
  runCopyHolderModel,
  type CopyHolderCounts,
  type CopyHolderRig,
} from './copy-holders/run.ts';
export { requireServices, type ServiceProbe } from './services.ts';
export * from './hook-receiver.ts';
export { freePort } from './free-port.ts';
export { CountingStores, totalCount, type StoreReads } from './counting-stores.ts';
export { delayingProxy, type DelayingProxy } from './delaying-proxy.ts';
export { InjectedWriteFault, WriteFaults, type WriteFaultPlan } from './write-faults.ts';
