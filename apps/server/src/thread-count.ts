/**
 * How many threads `npm start` runs (SEQLINE_THREADS). Every thread listens on the one port, so
 * the runtime must let sockets of several threads share it: native uWebSockets.js listens with
 * SO_REUSEPORT on Linux; node:http (the `ws` transport) takes `reusePort` from Node 22.12 on.
 * On Node 22 and 24 no uWS binary fits (the bundled ones stop at Node 20's ABI), so `auto`
 * picks `ws` there, and shares the port by `reusePort`.
 */
import { availableParallelism } from 'node:os';
import { loadNativeUws } from '@seqline/gateway';

export interface ThreadCountInput {
  requested: number | undefined;
  transport: 'auto' | 'uws' | 'ws';
  /** Default: this runtime's. */
  nodeVersion?: string;
  /** Default: whether the native uWS binary loads here. */
  uwsLoads?: () => boolean;
  /** Default: os.availableParallelism(), the cores this process may use. */
  cores?: number;
}

export type ThreadCount = { ok: true; threads: number; note?: string } | { ok: false; problem: string };

/** Node >= 22.12: node:net's listen takes `reusePort`. */
export function nodeSharesPorts(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12);
}

export function threadCount(input: ThreadCountInput): ThreadCount {
  const version = input.nodeVersion ?? process.version;
  const uwsLoads = input.uwsLoads ?? (() => loadNativeUws().ok);
  // uws: refuses to start without its binary, so it is the transport if the process starts at all.
  const shares = input.transport === 'uws' || nodeSharesPorts(version) || (input.transport === 'auto' && uwsLoads());
  if (shares) return { ok: true, threads: input.requested ?? input.cores ?? availableParallelism() };
  const why = `Node ${version} with the ws transport cannot share a port between threads (reusePort needs Node >= 22.12, or the native uWS transport)`;
  if (input.requested !== undefined && input.requested > 1) return { ok: false, problem: `${input.requested} threads asked, but ${why}` };
  return { ok: true, threads: 1, ...(input.requested === undefined && { note: `one thread: ${why}` }) };
}
