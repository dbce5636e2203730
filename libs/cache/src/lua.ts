/** A Lua script run by SHA (EVALSHA), loaded with EVAL when the server does not know it yet. */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export type ScriptArg = string | number;

export class LuaScript {
  readonly sha: string;

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * A restarted or failed-over server has an empty script cache, so NOSCRIPT is normal after
   * either: EVAL sends the source once, which also caches it for the next EVALSHA.
   */
  async run(redis: Redis, keys: string[], args: ScriptArg[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
