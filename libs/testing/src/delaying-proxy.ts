/**
 * A TCP proxy on loopback that holds what a client sends for `delayMs` (set at any time), and
 * passes what it receives at once: a slow network or a busy process on one side, for tests of
 * what waits for an answer. Order is kept (equal delays fire in the order they were set).
 */
import net from 'node:net';

export interface DelayingProxy {
  /** `host:port` to connect to instead of the target. */
  readonly url: string;
  readonly port: number;
  /** Delay of the client's bytes from now on (0: none). */
  delayMs: number;
  close(): Promise<void>;
}

export async function delayingProxy(target: { host: string; port: number }): Promise<DelayingProxy> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const proxy: { delayMs: number } = { delayMs: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    track(client);
    track(upstream);
    client.on('data', (chunk) => {
      const send = () => upstream.destroyed || upstream.write(chunk);
      if (proxy.delayMs > 0) setTimeout(send, proxy.delayMs);
      else send();
    });
    upstream.on('data', (chunk) => client.destroyed || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return Object.assign(proxy, {
    url: `127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}
