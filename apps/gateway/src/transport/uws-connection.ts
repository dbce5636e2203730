/** One uWS WebSocket as the gateway sees it (SocketConnection), writing once per turn. */
import type { WebSocket } from 'uWebSockets.js';
import type { SocketConnection } from './transport.ts';
import type { HeldWrites, TurnWrites } from './turn-writes.ts';

/**
 * Outside its own callbacks uWS writes each send at once, a syscall per frame; so the frames of
 * a turn are held here and handed to uWS together inside one `cork` at the turn's end
 * (TurnWrites), in the order they were sent. Held bytes count in bufferedAmount.
 */
export class UwsConnection implements SocketConnection, HeldWrites {
  isOpen = true;
  /** This turn's frames not handed to uWS yet; the array is reused turn after turn. */
  private readonly held: string[] = [];
  private heldBytes = 0;
  /** Due in the turn's flush. */
  private holding = false;
  /** Set by sendHeld when uWS dropped a frame. */
  private dropped = false;
  private readonly sendHeld = (): void => {
    for (const text of this.held) if (this.ws.send(text, false) === 2) this.dropped = true; // 2 = over uWS's maxBackpressure
  };

  constructor(
    private readonly ws: WebSocket<unknown>,
    private readonly turn: TurnWrites,
  ) {}

  send(text: string): boolean {
    if (!this.isOpen) return false;
    this.held.push(text);
    this.heldBytes += Buffer.byteLength(text);
    if (this.heldBytes >= this.turn.flushAt) return this.flush();
    if (!this.holding) {
      this.holding = true;
      this.turn.hold(this);
    }
    return true;
  }

  flushTurn(): void {
    this.holding = false;
    try {
      // uWS drops only past twice the gateway's bound, which closes the socket first (held bytes counted).
      if (!this.flush()) this.terminate();
    } catch {
      this.terminate();
    }
  }

  bufferedAmount(): number {
    return this.isOpen ? this.ws.getBufferedAmount() + this.heldBytes : 0;
  }

  close(code: number, reason: string): void {
    if (!this.isOpen) return;
    this.flush(); // the close frame goes after every frame sent before it
    this.isOpen = false; // end() runs the close handler synchronously
    this.ws.end(code, reason);
  }

  terminate(): void {
    if (!this.isOpen) return;
    this.gone();
    this.ws.close();
  }

  /** The socket is closed: what it held is dropped. */
  gone(): void {
    this.isOpen = false;
    this.held.length = 0;
    this.heldBytes = 0;
  }

  /** Hands the held frames to uWS in one write; false when uWS dropped one. */
  private flush(): boolean {
    if (!this.isOpen || this.held.length === 0) return this.isOpen;
    this.dropped = false;
    try {
      this.ws.cork(this.sendHeld);
    } finally {
      this.held.length = 0;
      this.heldBytes = 0;
    }
    return !this.dropped;
  }
}
