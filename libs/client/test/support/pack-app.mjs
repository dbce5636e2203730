/**
 * An app on the installed @seqline/client, copied into a fresh project by pack.test.ts and run
 * with plain `node` (no tsx, no workspace): alice sends to bob, bob gets the push, a resend is
 * a duplicate, bob comes back with his stored max seq and syncs exactly what he missed.
 * Prints one JSON line. Env: MODE (ws | peer | global | none), URL, TOKEN_ALICE, TOKEN_BOB, BOB
 * (bob's user id), SDK (module to import for `global`: the browser bundle), STORE_DIR.
 */
import { join } from 'node:path';

const { MODE, URL: SERVER_URL, TOKEN_ALICE, TOKEN_BOB, BOB, STORE_DIR } = process.env;
const watchdog = setTimeout(() => fail('timed out'), 20_000);

function fail(message) {
  console.log(JSON.stringify({ ok: false, message }));
  process.exit(1);
}

function until(cond, what, ms = 5_000) {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (cond()) resolve();
      else if (Date.now() > deadline) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(tick, 10);
    };
    tick();
  });
}

/** Records how each socket was opened: token in the query string or in a header. */
const opened = [];
function recording(Base) {
  return class extends Base {
    constructor(url, protocols, options) {
      super(url, protocols, options);
      opened.push({ query: new URL(url).searchParams.has('token'), header: Boolean(options?.headers?.Authorization) });
    }
  };
}

let sdk;
let WebSocketOption;
let bobStore;
if (MODE === 'global') {
  // The browser bundle, on a global WebSocket, persisting max seq the browser way.
  globalThis.WebSocket = recording(globalThis.WebSocket);
  const items = new Map();
  globalThis.localStorage ??= { getItem: (k) => items.get(k) ?? null, setItem: (k, v) => void items.set(k, String(v)) };
  sdk = await import(process.env.SDK);
  bobStore = {
    async load() {
      return Number(localStorage.getItem('seqline.maxSeq') ?? 0);
    },
    async save(seq) {
      localStorage.setItem('seqline.maxSeq', String(seq));
    },
  };
} else {
  sdk = await import('@seqline/client');
  const { FileMaxSeqStore } = await import('@seqline/client/node');
  bobStore = new FileMaxSeqStore(join(STORE_DIR, `${BOB}.maxseq.json`));
  // `peer`: no option and (on Node 20) no global WebSocket, so the SDK loads the optional peer `ws`.
  if (MODE === 'ws') WebSocketOption = recording((await import('ws')).WebSocket);
}
const hadGlobalWebSocket = typeof globalThis.WebSocket === 'function';
const { SeqlineClient, SeqlineClientError } = sdk;

function client(token, store) {
  return new SeqlineClient({
    url: SERVER_URL,
    token,
    store,
    requestTimeoutMs: 3_000,
    ...(WebSocketOption ? { WebSocket: WebSocketOption } : {}),
  });
}

if (MODE === 'none') {
  const c = client(TOKEN_ALICE);
  try {
    await c.connect();
    fail('connected without any WebSocket');
  } catch (err) {
    console.log(JSON.stringify({ ok: true, code: err.code, typed: err instanceof SeqlineClientError }));
    process.exit(0);
  }
}

const bobSeen = [];
const bob = client(async () => TOKEN_BOB, bobStore);
bob.on('entries', (entries) => {
  for (const e of entries) bobSeen.push(e);
});
let bobSyncs = 0;
bob.on('synced', () => {
  bobSyncs += 1;
});
const alice = client(TOKEN_ALICE);
await Promise.all([alice.connect(), bob.connect()]);
await until(() => bobSyncs === 1, 'bob synced');

const text = (n) => ({ to: { user: BOB }, type: 'text', body: { text: `hi ${n}` } });
const first = await alice.send(text(1));
await until(() => bobSeen.some((e) => e.appinfo === first.appinfo), 'the push to bob');
const again = await alice.send({ ...text(1), appinfo: first.appinfo });
await until(() => bob.maxSeq === first.seq, 'bob max seq saved');
bob.close();

// While bob is away: two more. He comes back with his stored max seq and gets only those.
const missed = [await alice.send(text(2)), await alice.send(text(3))];
const resumed = [];
const bob2 = client(async () => TOKEN_BOB, bobStore);
bob2.on('entries', (entries) => {
  for (const e of entries) resumed.push(e);
});
let resumedSynced = false;
bob2.on('synced', () => {
  resumedSynced = true;
});
await bob2.connect();
await until(() => resumedSynced, 'bob synced again');
const storedMaxSeq = await bobStore.load();

alice.close();
bob2.close();
clearTimeout(watchdog);
console.log(
  JSON.stringify({
    ok: true,
    first,
    again,
    bobSyncs,
    pushedToBob: bobSeen.filter((e) => e.kind === 'msg').map((e) => ({ seq: e.seq, appinfo: e.appinfo, from: e.from, body: e.body })),
    missed: missed.map((m) => ({ seq: m.seq, appinfo: m.appinfo })),
    resumed: resumed.map((e) => ({ seq: e.seq, appinfo: e.appinfo })),
    bobMaxSeq: bob2.maxSeq,
    storedMaxSeq,
    opened,
    hadGlobalWebSocket,
  }),
);
process.exit(0);
