import { SeqlineClient, type Entry, type SeqlineClientOptions } from '../../src/index.ts';
import type { ScriptedServer } from './scripted-server.ts';

export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A client with fast timers, so failure paths run in milliseconds. */
export function testClient(server: ScriptedServer, opts: Partial<SeqlineClientOptions> = {}): SeqlineClient {
  return new SeqlineClient({
    url: server.url,
    token: 'good-token',
    requestTimeoutMs: 300,
    reconnectBackoff: { initialMs: 5, maxMs: 40 },
    busyBackoff: { initialMs: 5, maxMs: 20 },
    ...opts,
  });
}

/** Records every batch the client emits. */
export function collect(client: SeqlineClient): { batches: Entry[][]; seqs: () => number[] } {
  const batches: Entry[][] = [];
  client.on('entries', (entries) => {
    batches.push(entries);
  });
  return { batches, seqs: () => batches.flat().map((e) => e.seq) };
}
