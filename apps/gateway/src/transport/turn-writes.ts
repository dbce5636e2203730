/**
 * One socket write per socket per event-loop turn. Written one by one, each frame is a syscall,
 * the largest self time in the CPU profile of a 1:1 message (docs/benchmarks.md), and a socket
 * often gets several frames in one turn: the replies to a client's many sends in flight, which
 * one commit answers together, a sync answer with pushes, a busy group's pushes. So a transport
 * holds a socket's frames from the first one of a turn and writes them together, in the order
 * they were sent, from one setImmediate for all sockets.
 *
 * Held bytes count in the socket's bufferedAmount, so the slow-consumer bound
 * (TransportLimits.maxBackpressureBytes) sees them; once a socket holds `flushAt` bytes they are
 * written at once, so what is held stays well below that bound and a large frame, or a busy
 * turn, is never mistaken for a slow reader.
 */
const FLUSH_AT_MOST_BYTES = 64 * 1024;

/** A connection holding the frames of this turn. */
export interface HeldWrites {
  /** Writes what the turn left held; called once per `hold`. Drops the socket if that fails. */
  flushTurn(): void;
}

export class TurnWrites {
  /** A socket holding this many bytes writes them at once: 64 KiB, or a quarter of the backpressure bound. */
  readonly flushAt: number;
  private due: HeldWrites[] = [];
  /** The previous turn's list, emptied and reused: no allocation per turn. */
  private spare: HeldWrites[] = [];

  constructor(maxBackpressureBytes: number) {
    this.flushAt = Math.min(FLUSH_AT_MOST_BYTES, Math.floor(maxBackpressureBytes / 4));
  }

  /** Call once per turn per connection, with its first held frame. */
  hold(conn: HeldWrites): void {
    this.due.push(conn);
    if (this.due.length === 1) setImmediate(this.flushAll);
  }

  private readonly flushAll = (): void => {
    const due = this.due;
    this.due = this.spare;
    for (const conn of due) conn.flushTurn();
    due.length = 0;
    this.spare = due;
  };
}
