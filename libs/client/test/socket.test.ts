/**
 * Which WebSocket the SDK opens and where the token goes: a header only where one can be set
 * (a given non-global constructor such as `ws`, on Node), the query string everywhere else.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resolveWebSocket, socketUrl, type WebSocketConstructor } from '../src/socket.ts';

const globals = globalThis as { WebSocket?: unknown; process?: unknown };
const originalWebSocket = globals.WebSocket;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

class FakeSocket {
  readyState = 0;
  onopen = null;
  onmessage = null;
  onclose = null;
  onerror = null;
  send(): void {}
  close(): void {}
}
const Fake = FakeSocket as unknown as WebSocketConstructor;
const Browser = class extends FakeSocket {} as unknown as WebSocketConstructor;

afterEach(() => {
  if (originalWebSocket === undefined) delete globals.WebSocket;
  else globals.WebSocket = originalWebSocket;
});

describe('resolveWebSocket', () => {
  it('a given constructor on Node sends the token in a header, unless told query', async () => {
    expect(await resolveWebSocket(Fake)).toEqual({ ctor: Fake, transport: 'header' });
    expect(await resolveWebSocket(Fake, 'query')).toEqual({ ctor: Fake, transport: 'query' });
  });

  it('the global WebSocket (browser, Node >= 22) puts the token in the query string, given or not', async () => {
    globals.WebSocket = Browser;
    expect(await resolveWebSocket()).toEqual({ ctor: Browser, transport: 'query' });
    expect(await resolveWebSocket(Browser)).toEqual({ ctor: Browser, transport: 'query' });
    // A given `ws` still wins over the global, with its header.
    expect(await resolveWebSocket(Fake)).toEqual({ ctor: Fake, transport: 'header' });
  });

  it('outside Node (no process.versions.node) a given constructor also uses the query string', async () => {
    const original = Object.getOwnPropertyDescriptor(globalThis, 'process');
    Object.defineProperty(globalThis, 'process', { value: undefined, configurable: true, writable: true });
    let resolved: ReturnType<typeof resolveWebSocket>;
    try {
      resolved = resolveWebSocket(Fake); // the given-constructor path decides before its first await
    } finally {
      Object.defineProperty(globalThis, 'process', original!);
    }
    expect(await resolved).toEqual({ ctor: Fake, transport: 'query' });
  });

  it.skipIf(NODE_MAJOR >= 22)('Node 20 without a global WebSocket loads the optional peer ws, with a header', async () => {
    delete globals.WebSocket;
    const ws = (await import('ws')).WebSocket;
    expect(await resolveWebSocket()).toEqual({ ctor: ws, transport: 'header' });
  });
});

describe('socketUrl', () => {
  it('adds /v1/ws to a bare origin and the token only when asked', () => {
    expect(socketUrl('ws://h:1', null)).toBe('ws://h:1/v1/ws');
    expect(socketUrl('wss://h/custom/ws', 'a.b c')).toBe('wss://h/custom/ws?token=a.b+c');
  });
});
