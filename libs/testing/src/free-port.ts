/**
 * A port for a server a test starts later (often in a child process). Not from the kernel's
 * ephemeral range: a port bound at 0 and closed again can be taken by any outgoing connection
 * (a driver's pool, an HTTP client) before the child binds it — EADDRINUSE in CI. Below that
 * range only a listener takes a port, and each vitest worker draws from its own slice, so two
 * workers never hand out the same one; the port is checked bindable before it is returned.
 */
import { createServer } from 'node:net';

/** Below Linux's default ephemeral range (32768–60999), above the services' fixed ports. */
const FIRST = 10_000;
const LAST = 32_767;
const SLICES = 16;

const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  const id = Number(process.env['VITEST_POOL_ID']);
  const pool = (Number.isInteger(id) ? id : process.pid) % SLICES;
  const size = Math.floor((LAST - FIRST + 1) / SLICES);
  const start = FIRST + pool * size;
  for (let tries = 0; tries < size; tries++) {
    const port = start + Math.floor(Math.random() * size);
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`freePort: no free port in ${start}–${start + size - 1}`);
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
