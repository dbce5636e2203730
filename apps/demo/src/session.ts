/** A signed-in user's session on the demo page, and what the chat view reads from its inbox. */
import type { Conv, Entry, SeqlineClient } from '@seqline/client';

export interface Session {
  user: string;
  client: SeqlineClient;
  /** The inbox as delivered, ascending by seq. */
  entries: Entry[];
  /** Conversations opened or created here before any message of theirs arrived. */
  opened: Map<string, Conv>;
  /** Names of the groups created in this session (others show their id). */
  groupNames: Map<string, string>;
  /** Seqs this user has sent receipts for (here, or `read` entries from other devices). */
  read: Set<number>;
  /** Per conversation, the lastSeq its read cursor was last moved to from here. */
  marked: Map<string, number>;
  /** The own message the send form edits instead of sending a new one. */
  editing: Entry | null;
  current: Conv | null;
}

export function isRecalled(s: Session, msg: Entry): boolean {
  // An appinfo is unique per sender only: the recall names its message's sender (else its own `from`).
  return s.entries.some(
    (e) => e.kind === 'recall' && e.recall?.appinfo === msg.appinfo && (e.recall.from ?? e.from) === msg.from && e.conv.id === msg.conv.id,
  );
}

/** Everyone who has read one of my messages, from the `receipt` entries pointing at it. */
export function readers(s: Session, msg: Entry): string[] {
  const names = new Set<string>();
  for (const e of s.entries) if (e.kind === 'receipt' && e.referSeq === msg.seq) for (const r of e.readBy ?? []) names.add(r);
  return [...names].sort();
}
