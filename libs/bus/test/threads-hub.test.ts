/**
 * The thread hub across a real worker thread: answers and typed errors cross the port; a request
 * to a thread that ends — exit, crash, terminate, or its hub closing — fails OVERLOADED as the
 * port's `close` says so, never by a timeout; a channel closing answers what it serves.
 */
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { BadRequestError, InternalError, NotFoundError, OverloadedError } from '@seqline/core';
import { eventually } from '@seqline/testing';
import { ThreadHub, ThreadUnavailableError, type ThreadChannel } from '../src/threads.ts';
import { meshWithThreads, type RunningThread } from './threads-harness.ts';

const running: Array<{ hub: ThreadHub; threads: RunningThread[] }> = [];
afterEach(async () => {
  for (const { hub, threads } of running.splice(0)) {
    await Promise.all(threads.map((t) => t.worker.terminate()));
    await hub.close();
  }
});

/** The test thread (thread 1) and an echo thread (thread 0). */
function echoThread(): { hub: ThreadHub; thread: RunningThread; echo: ThreadChannel; ctl: ThreadChannel } {
  const mesh = meshWithThreads(2, 'thread-echo.ts');
  running.push(mesh);
  return { hub: mesh.hub, thread: mesh.threads[0]!, echo: mesh.hub.open('echo', {}), ctl: mesh.hub.open('ctl', {}) };
}

async function laterRequestsFailAtOnce(channel: ThreadChannel): Promise<void> {
  const started = performance.now();
  await expect(channel.request(0, { op: 'echo', value: 1 })).rejects.toThrow(ThreadUnavailableError);
  expect(performance.now() - started).toBeLessThan(100);
}

describe('thread hub', () => {
  it('answers across the port; errors arrive as their SeqlineError class, anything else as INTERNAL', async () => {
    const { echo } = echoThread();
    const value = { text: 'héllo ✓', n: [1, 2], nested: { ok: true } };
    expect(await echo.request(0, { op: 'echo', value })).toEqual(value);
    await expect(echo.request(0, { op: 'fail', code: 'BAD_REQUEST', message: 'no' })).rejects.toThrow(BadRequestError);
    await expect(echo.request(0, { op: 'fail', code: 'NOT_FOUND', message: 'gone' })).rejects.toThrow(NotFoundError);
    const plain = await echo.request(0, { op: 'throw' }).catch((err: unknown) => err);
    expect(plain).toBeInstanceOf(InternalError);
    expect((plain as Error).message).toContain('RangeError: a plain error');
  });

  it('many requests in flight get their own answers', async () => {
    const { echo } = echoThread();
    const values = Array.from({ length: 500 }, (_, i) => `v${i}`);
    expect(await Promise.all(values.map((value) => echo.request(0, { op: 'echo', value })))).toEqual(values);
  });

  for (const how of ['exit', 'throw', 'terminate'] as const) {
    it(`a request in flight to a thread that ends (${how}) fails OVERLOADED, and so does every later one, at once`, async () => {
      const { echo, ctl, thread } = echoThread();
      const inFlight = echo.request(0, { op: 'never' }).catch((err: unknown) => err);
      await ctl.request(0, { op: 'held' }); // answered after the thread took the request before it
      if (how === 'terminate') await thread.worker.terminate();
      else await ctl.request(0, { op: 'end', how });
      const err = await inFlight;
      expect(err).toBeInstanceOf(ThreadUnavailableError);
      expect(err).toBeInstanceOf(OverloadedError);
      expect((err as OverloadedError).code).toBe('OVERLOADED');
      await laterRequestsFailAtOnce(echo);
      expect(await thread.exited).toBe(how === 'exit' ? 3 : 1);
    });
  }

  it('a thread whose hub closed is gone: its requests fail OVERLOADED at once, and it ends', async () => {
    const { echo, ctl, thread } = echoThread();
    await ctl.request(0, { op: 'end', how: 'close-hub' });
    expect(await thread.exited).toBe(0); // nothing left open
    await laterRequestsFailAtOnce(echo);
  });

  it('a channel closing answers the request it serves, and answers OVERLOADED what comes meanwhile', async () => {
    const { echo, ctl } = echoThread();
    const holding = echo.request(0, { op: 'hold', id: 'a' });
    await eventually(async () => expect(await ctl.request(0, { op: 'held' })).toEqual(['a']));
    let closed = false;
    const closing = ctl.request(0, { op: 'close-echo' }).finally(() => (closed = true));
    await expect(echo.request(0, { op: 'echo', value: 'late' })).rejects.toThrow(OverloadedError);
    expect(closed).toBe(false); // still serving `a`
    await ctl.request(0, { op: 'release', id: 'a' });
    expect(await holding).toBe('released a');
    expect(await closing).toBe('closed');
  });

  it('a request for a channel the other thread has not opened yet waits for it, then is answered', async () => {
    const { hub, ctl } = echoThread();
    const late = hub.open('late', {});
    const answer = late.request(0, 'early');
    await ctl.request(0, { op: 'open-late' });
    expect(await answer).toEqual({ late: 'early' });
  });

  it('closing a hub closes its channels first: a request served is answered before the ports close', async () => {
    const { port1, port2 } = new MessageChannel();
    const [a, b] = [new ThreadHub({ self: 0 }), new ThreadHub({ self: 1 })];
    a.connect(1, port1);
    b.connect(0, port2);
    let release: (() => void) | undefined;
    a.open('work', { onRequest: () => new Promise((resolve) => (release = () => resolve('done'))) });
    const work = b.open('work', {});
    const answer = work.request(0, null);
    await eventually(() => expect(release).toBeDefined());
    const closing = a.close();
    release!();
    expect(await answer).toBe('done');
    await closing;
    await expect(work.request(0, null)).rejects.toThrow(ThreadUnavailableError);
    expect(b.live()).toEqual([]);
    await b.close();
  });

  it('drops a malformed frame and keeps serving', async () => {
    const { port1, port2 } = new MessageChannel();
    const hub = new ThreadHub({ self: 0 });
    hub.connect(1, port1);
    hub.open('echo', { onRequest: (body) => body });
    const answers: unknown[] = [];
    port2.on('message', (m) => answers.push(m));
    for (const junk of [null, 'text', { kind: 'req' }, { kind: 'res', id: 'x' }, { kind: 'res', id: 99, ok: true }])
      port2.postMessage(junk);
    port2.postMessage({ kind: 'req', ch: 'echo', id: 7, body: 'still here' });
    await eventually(() => expect(answers).toEqual([{ kind: 'res', id: 7, ok: true, value: 'still here' }]));
    port2.close();
    await hub.close();
  });
});
