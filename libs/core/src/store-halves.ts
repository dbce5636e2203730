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
    getEntry: (inbox, seq) => reader.getEntry(inbox, seq),
    readAfter: (inbox, afterSeq, limit) => reader.readAfter(inbox, afterSeq, limit),
    readBefore: (inbox, beforeSeq, limit) => reader.readBefore(inbox, beforeSeq, limit),
    headSeq: (inbox) => reader.headSeq(inbox),
    getReaders: (inbox, seq) => reader.getReaders(inbox, seq),
    append: (input) => writer.append(input),
    addReaders: (inbox, seq, readers) => writer.addReaders(inbox, seq, readers),
  };
}

/** Reads and read cursors go to `reader`, appends to `writer`. */
export function groupStreamOf(halves: { reader: GroupStreamReader; writer: GroupStreamStoreWriter }): GroupStreamStore {
  const { reader, writer } = halves;
  return {
    findSeqs: (input) => reader.findSeqs(input),
    readAfter: (group, afterGseq, limit) => reader.readAfter(group, afterGseq, limit),
    readBefore: (group, beforeGseq, limit) => reader.readBefore(group, beforeGseq, limit),
    headSeq: (group) => reader.headSeq(group),
    setCursor: (group, inbox, gseq) => reader.setCursor(group, inbox, gseq),
    getCursor: (group, inbox) => reader.getCursor(group, inbox),
    listCursors: (group) => reader.listCursors(group),
    append: (input) => writer.append(input),
  };
}
