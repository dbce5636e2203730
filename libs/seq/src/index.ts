export { SectionAllocator } from './section-allocator.ts';
export type { SectionAllocatorOptions } from './section-allocator.ts';
export { InboxOwner } from './inbox-owner.ts';
export { RecentAppinfos } from './recent-appinfos.ts';
export { sectionOfShard } from './owner-options.ts';
export type { InboxOwnerOptions } from './owner-options.ts';
export { ShardNotOwnedError, InboxOwnerClosedError } from './errors.ts';
export { GroupStreamWriter, sectionOfGroupShard } from './group-stream-writer.ts';
export type { GroupAppendOutcome, GroupStreamWriterOptions } from './group-stream-writer.ts';
