// The port (port.ts) is exported through ports.ts with the other ports. FactLookup and
// ChangeBuilder are the planner's machinery and stay inside.
export * from './rules.ts';
export { emptyFacts, emptyFactsRequest, isEmptyRequest, type ConversationFacts, type FactsRequest } from './facts.ts';
export type { ConversationChanges, RecordChange } from './changes.ts';
export * from './apply.ts';
export * from './recount.ts';
export * from './expiry.ts';
export * from './view.ts';
export * from './limits.ts';
export * from './stream.ts';
export * from './entries.ts';
