/** What the soak bench reads of the server's memory: /proc, /metrics and its --trace-gc lines. */
import { readFile } from 'node:fs/promises';
import type { ChildServer } from './support.ts';

/** The live heap after one full GC (from its --trace-gc line), and how many users were done then. */
export interface FullGc {
  users: number;
  liveAfter: number;
}

/** `Mark-Compact 336.5 (459.5) -> 91.0 (443.1) MB`: used (committed) before -> after. */
const MARK_COMPACT = /Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/;

/** Collects the full GCs of a child's --trace-gc output, tagged with `users()` at the time. */
export function watchFullGcs(server: ChildServer, users: () => number): FullGc[] {
  const gcs: FullGc[] = [];
  let partial = '';
  server.onOutput((chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const mb = MARK_COMPACT.exec(line)?.[1];
      if (mb !== undefined) gcs.push({ users: users(), liveAfter: Number(mb) * 1024 * 1024 });
    }
  });
  return gcs;
}

export interface MemorySample {
  users: number;
  seconds: number;
  vmRss: number;
  rssAnon: number;
  rssFile: number;
  heapUsed: number;
  /** V8 heap committed (nodejs_heap_size_total_bytes). */
  heapTotal: number;
  /** Memory held outside the V8 heap by JS objects: Buffers, ArrayBuffers (nodejs_external_memory_bytes). */
  external: number;
  /** seqline_bound_fill by bound name. */
  fills: Record<string, number>;
}

export async function procStatus(pid: number): Promise<{ vmRss: number; rssAnon: number; rssFile: number }> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text)?.[1] ?? Number.NaN) * 1024;
  return { vmRss: kb('VmRSS'), rssAnon: kb('RssAnon'), rssFile: kb('RssFile') };
}

export async function serverMetrics(
  port: number,
): Promise<{ heapUsed: number; heapTotal: number; external: number; fills: Record<string, number> }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const fills: Record<string, number> = {};
  for (const m of text.matchAll(/^seqline_bound_fill\{bound="([^"]+)"\} (\S+)$/gm)) fills[m[1] as string] = Number(m[2]);
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    heapUsed: gauge('nodejs_heap_size_used_bytes'),
    heapTotal: gauge('nodejs_heap_size_total_bytes'),
    external: gauge('nodejs_external_memory_bytes'),
    fills,
  };
}

/** Least-squares slope of y over x. */
export function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}
