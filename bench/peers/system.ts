/**
 * What the peers bench drives: a messaging server (Centrifugo or Seqline) behind one small
 * interface, so one load generator runs the same scenario against each.
 */
import type { SystemKey } from './options.ts';

/** One message handed to the server: when its frame was written, and its acknowledgement. */
export interface Sent {
  sentAt: number;
  /** Resolves with undefined when the server accepted it, else with the error code. */
  ack: Promise<string | undefined>;
}

export interface PeerClient {
  /** A 1:1 message to `to`'s socket(s); `id` comes back to `onMessage` on delivery. */
  send(to: string, id: string): Sent;
  /** One message to a group formed by `PeerSystem.formGroup`. */
  sendToGroup(group: string, id: string): Sent;
  /**
   * Every delivered message with the time its frame arrived (before parsing). `id` is undefined
   * for a delivery whose id the lean client does not read (Seqline's `group.push`).
   */
  onMessage: ((id: string | undefined, at: number) => void) | undefined;
  readonly isOpen: boolean;
  close(): Promise<void>;
}

/** Where a user's client stood before going offline, to catch up from on reconnect. */
export type CatchUpMark = { kind: 'seq'; maxSeq: number } | { kind: 'stream'; channel: string; offset: number; epoch: string };

export interface CatchUpResult {
  /** Messages of the catch-up received (must equal the count sent while offline). */
  messages: number;
  /** Socket opened → last message received. */
  ms: number;
  /** Request/reply round trips it took (sync pages, or the one connect). */
  roundTrips: number;
}

export interface Proc {
  label: string;
  pid: number;
}

export interface PeerSystem {
  readonly key: SystemKey;
  readonly label: string;
  /** The server processes (RSS, CPU). */
  readonly processes: Proc[];
  /** The stores they write to; `shared` ones also serve other work on this machine. */
  readonly stores: Array<Proc & { shared: boolean }>;
  /** How this system keeps and delivers messages, for the notes. */
  readonly setup: string[];
  /** Opens an authenticated socket of `user`, ready to receive that user's messages. */
  connect(user: string): Promise<PeerClient>;
  /**
   * Makes the users of `clients` one group (clients[0] its creator) and waits until it is ready
   * to send to; resolves with a detail for the notes, if any.
   */
  formGroup(group: string, users: string[], clients: PeerClient[]): Promise<string | undefined>;
  /** Connects `user`, notes where it stands, disconnects. */
  mark(user: string): Promise<CatchUpMark>;
  /** Reconnects `user` and receives everything after `mark`. */
  catchUp(user: string, mark: CatchUpMark): Promise<CatchUpResult>;
  stop(): Promise<void>;
}
