/** SEQLINE_THREADS: the default is the cores, unless the runtime cannot share a port between threads. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@seqline/core';
import { loadServerConfig } from '../src/index.ts';
import { nodeSharesPorts, threadCount } from '../src/thread-count.ts';

const never = () => false;

describe('thread count', () => {
  it('node:http shares a port between threads from Node 22.12 on', () => {
    expect(['v20.19.0', 'v22.11.0', 'v21.7.3'].map(nodeSharesPorts)).toEqual([false, false, false]);
    expect(['v22.12.0', 'v22.23.3', 'v23.0.0', 'v24.21.0'].map(nodeSharesPorts)).toEqual([true, true, true, true]);
  });

  it('defaults to the cores where the port can be shared: ws on Node >= 22.12, or native uWS', () => {
    expect(threadCount({ requested: undefined, transport: 'auto', nodeVersion: 'v24.21.0', uwsLoads: never, cores: 6 })).toEqual({
      ok: true,
      threads: 6,
    });
    expect(threadCount({ requested: undefined, transport: 'auto', nodeVersion: 'v20.19.0', uwsLoads: () => true, cores: 4 })).toEqual({
      ok: true,
      threads: 4,
    });
    expect(threadCount({ requested: undefined, transport: 'uws', nodeVersion: 'v20.19.0', uwsLoads: never, cores: 3 })).toEqual({
      ok: true,
      threads: 3,
    });
    expect(threadCount({ requested: 2, transport: 'ws', nodeVersion: 'v22.12.0', cores: 8 })).toEqual({ ok: true, threads: 2 });
  });

  it('defaults to one thread, saying why, where it cannot; refuses more when asked', () => {
    const old = { transport: 'ws', nodeVersion: 'v20.19.0', uwsLoads: never, cores: 8 } as const;
    const one = threadCount({ ...old, requested: undefined });
    expect(one).toMatchObject({ ok: true, threads: 1, note: expect.stringContaining('reusePort needs Node >= 22.12') as string });
    expect(threadCount({ ...old, transport: 'auto', requested: undefined })).toMatchObject({ ok: true, threads: 1 });
    expect(threadCount({ ...old, requested: 1 })).toEqual({ ok: true, threads: 1 });
    expect(threadCount({ ...old, requested: 2 })).toMatchObject({
      ok: false,
      problem: expect.stringContaining('2 threads asked') as string,
    });
  });

  it('SEQLINE_THREADS is read at the edge: a number from 1 to 64', async () => {
    const dir = { SEQLINE_DATA_DIR: `/tmp/seqline-thread-count-${process.pid}`, SEQLINE_SECRET: 'thread-count-secret-0123' };
    expect((await loadServerConfig({ ...dir, SEQLINE_THREADS: '3' })).threads).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'many', '65']) {
      await expect(loadServerConfig({ ...dir, SEQLINE_THREADS: bad })).rejects.toThrow(ConfigError);
    }
  });
});
