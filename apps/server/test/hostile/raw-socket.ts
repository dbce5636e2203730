/** A bare WebSocket for the socket-limit attacks: how it closed, and calls matched by id. */
import WebSocket from 'ws';

export interface Opened {
  ws: WebSocket;
  closed: Promise<{ code: number; reason: string }>;
  call(op: string, args: object): Promise<Record<string, unknown>>;
}

export async function openSocket(url: string, token: string): Promise<Opened> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.once('close', (code, reason) => r({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let next = 1;
  const call = (op: string, args: object) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = next++;
      const onMessage = (data: WebSocket.RawData) => {
        const frame = JSON.parse(String(data)) as Record<string, unknown>;
        if (frame['id'] === id) {
          ws.off('message', onMessage);
          resolve(frame);
        }
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id, op, ...args }));
    });
  return { ws, closed, call };
}
