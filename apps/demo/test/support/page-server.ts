/**
 * A tiny HTTP server on loopback serving fixed pages: a second origin for the tests (the SDK
 * test page, a foreign page). Real servers, not intercepted routes: Chromium's local network
 * access checks treat an intercepted page as public and would block its sockets for that reason.
 */
import { createServer, type Server } from 'node:http';

export interface PageServer {
  origin: string;
  close(): Promise<void>;
}

export async function startPageServer(port: number, pages: Record<string, { type: string; body: string }>): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    const page = pages[req.url ?? ''];
    if (page === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': page.type }).end(page.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
