/**
 * A store put together from its reading half and a writing half: how a write decorator (a
 * shard's lease fence) stands in front of a store without repeating every read as a pass-through.
 */
import type { GroupStreamReader, GroupStreamStore, GroupStreamStoreWriter } from './group-ports.ts';
import type { TimelineReader, TimelineStore, TimelineWriter } from './ports.ts';

/** Reads go to `reader`, writes (append, addReaders) to `writer`. */
export function timelineOf(halves: { reader: TimelineReader; writer: TimelineWriter }): TimelineStore {
  const { reader, writer } = halves;
  return {
    findSeqs: (input) => reader.findSeqs(input),
    getEntry: (input) => reader.getEntry(input),
    readAfter: (input) => reader.readAfter(input),
    readBefore: (input) => reader.readBefore(input),
    headSeq: (inbox) => reader.headSeq(inbox),
    getReaders: (input) => reader.getReaders(input),
    append: (input) => writer.append(input),
    addReaders: (input) => writer.addReaders(input),
  };
}

/** Reads and read cursors go to `reader`, appends to `writer`. */
export function groupStreamOf(halves: { reader: GroupStreamReader; writer: GroupStreamStoreWriter }): GroupStreamStore {
  const { reader, writer } = halves;
  return {
    findSeqs: (input) => reader.findSeqs(input),
    readAfter: (input) => reader.readAfter(input),
    readBefore: (input) => reader.readBefore(input),
    headSeq: (group) => reader.headSeq(group),
    setCursor: (input) => reader.setCursor(input),
    getCursor: (input) => reader.getCursor(input),
    listCursors: (group) => reader.listCursors(group),
    append: (input) => writer.append(input),
  };
}
