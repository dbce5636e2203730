/**
 * The bad-frame flood, run as its own process (`node --conditions=source --import tsx bad-frame-flood.ts '<json>'`)
 * so that its CPU is not the measuring test's: each socket sends `badPerValid` malformed frames
 * of `frameBytes` (valid UTF-8, JSON cut short at the end, so a parser reads all of it) then one
 * valid `sync`, as fast as the server reads, and reconnects when closed, until `durationMs` or
 * SIGTERM. Prints one JSON line (FloodSummary) and exits. Bounded in time; loopback only.
 * SIGSTOP / SIGCONT pause and resume it (FloodProcess), so that unloaded and flooded windows
 * can alternate in one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

export interface FloodOptions {
  url: string;
  /** One socket per token (the same token twice = two sockets of one user). */
  tokens: string[];
  durationMs: number;
  badPerValid?: number;
  frameBytes?: number;
}

export interface FloodSummary {
  framesSent: number;
  bytesSent: number;
  connects: number;
  refusedUpgrades: number;
  replies: Record<string, number>;
  closes: Record<string, number>;
}

const HIGH_WATER = 512 * 1024;

/** The flood in a child process: pause(), resume(), stop() → its summary. */
export class FloodProcess {
  private readonly child: ChildProcess;
  private readonly summary: Promise<FloodSummary>;

  constructor(options: FloodOptions) {
    const script = fileURLToPath(import.meta.url);
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', script, JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.child = child;
    // A remote attacker costs the servers what they read, not its own CPU: on the shared 2 cores the
    // flood takes only what the servers leave, or its own work would set the victim's tail.
    if (child.pid !== undefined) setPriority(child.pid, 19);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    this.summary = new Promise((resolve, reject) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), options.durationMs + 30_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        const line = out.trim().split('\n').at(-1) ?? '';
        try {
          resolve(JSON.parse(line) as FloodSummary);
        } catch {
          reject(new Error(`flood exited ${code} without a summary: ${out.slice(-500)}`));
        }
      });
    });
    this.summary.catch(() => undefined);
  }

  pause(): void {
    this.child.kill('SIGSTOP');
  }
  resume(): void {
    this.child.kill('SIGCONT');
  }

  /** Ends the flood (at once) and resolves with what it did. */
  stop(): Promise<FloodSummary> {
    this.child.kill('SIGCONT');
    this.child.kill('SIGTERM');
    return this.summary;
  }
}

function badFrame(bytes: number): Buffer {
  const head = '{"id":0,"op":"send","appinfo":"flood","to":{"user":"nobody"},"type":"text","body":"';
  return Buffer.from(head + 'x'.repeat(Math.max(0, bytes - head.length))); // no closing quote or brace
}

async function flood(options: FloodOptions): Promise<FloodSummary> {
  const summary: FloodSummary = { framesSent: 0, bytesSent: 0, connects: 0, refusedUpgrades: 0, replies: {}, closes: {} };
  let deadline = Date.now() + options.durationMs;
  process.once('SIGTERM', () => {
    deadline = 0;
  });
  const bad = badFrame(options.frameBytes ?? 64 * 1024);
  const badPerValid = options.badPerValid ?? 19;
  const count = (into: Record<string, number>, key: string) => {
    into[key] = (into[key] ?? 0) + 1;
  };
  let validId = 1;

  const socketLoop = async (token: string): Promise<void> => {
    while (Date.now() < deadline) {
      const ws = new WebSocket(options.url, { headers: { authorization: `Bearer ${token}` }, maxPayload: 1024 * 1024 });
      ws.on('message', (data: WebSocket.RawData) => {
        const reply = JSON.parse(String(data)) as { ok?: boolean; error?: { code: string } };
        count(summary.replies, reply.ok === true ? 'ok' : (reply.error?.code ?? 'other'));
      });
      const opened = await new Promise<boolean>((resolve) => {
        ws.once('open', () => resolve(true));
        ws.once('error', () => resolve(false));
        ws.once('unexpected-response', (_req, res) => {
          res.resume();
          resolve(false);
        });
      });
      if (!opened) {
        summary.refusedUpgrades++;
        ws.terminate();
        // Held off (429): retry ten times a second. Reconnecting in a tight loop would be a
        // connection flood, another class (bounded at the network edge), and on these 2 shared
        // cores it would mostly measure this process's own CPU against the victim's.
        await sleep(100);
        continue;
      }
      summary.connects++;
      const closed = new Promise<void>((resolve) =>
        ws.once('close', (code) => {
          count(summary.closes, String(code));
          resolve();
        }),
      );
      let i = 0;
      while (ws.readyState === WebSocket.OPEN && Date.now() < deadline) {
        if (ws.bufferedAmount > HIGH_WATER) {
          await sleep(1);
          continue;
        }
        const frame =
          i++ % (badPerValid + 1) === badPerValid ? Buffer.from(JSON.stringify({ id: validId++, op: 'sync', maxSeq: 0, limit: 1 })) : bad;
        ws.send(frame);
        summary.framesSent++;
        summary.bytesSent += frame.byteLength;
        if (i % 16 === 0) await new Promise((r) => setImmediate(r)); // let replies and closes in
      }
      if (ws.readyState === WebSocket.OPEN) ws.terminate();
      await closed;
    }
  };
  await Promise.all(options.tokens.map(socketLoop));
  return summary;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = JSON.parse(process.argv[2] ?? '{}') as FloodOptions;
  void flood(options).then((summary) => {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    process.exit(0);
  });
}
