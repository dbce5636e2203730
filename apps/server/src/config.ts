import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOrCreateSecret } from '@seqline/protocol';
import { ConfigError, readOriginList, type TenantHooks } from '@seqline/core';
import type { AllowedOrigins } from '@seqline/gateway';
import { readHookDefaults } from '@seqline/runtime/hook-defaults';
import { z } from 'zod';
import { threadCount } from './thread-count.ts';

const DEFAULT_DEMO_DIR = fileURLToPath(new URL('../../demo/dist', import.meta.url));

/** Every setting of the single-process server, validated once here at the edge. */
export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  SEQLINE_DATA_DIR: z.string().default('./data'),
  SEQLINE_SECRET: z.string().min(16, 'SEQLINE_SECRET must be at least 16 characters').optional(),
  SEQLINE_TRANSPORT: z.enum(['auto', 'uws', 'ws']).default('auto'),
  /**
   * Threads serving the port, each owning the inbox shards s ≡ i (mod N) (threads.ts). Unset: the
   * cores this process may use, or 1 where the runtime cannot share a port between threads.
   */
  SEQLINE_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  /** Unset or blank: the default of loadServerConfig's `allowedOrigins`; a list that allows no browser is refused. */
  SEQLINE_ALLOWED_ORIGINS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const read = readOriginList(v);
      if (read.ok) return read.origins;
      ctx.addIssue({ code: 'custom', message: read.problem });
      return z.NEVER;
    }),
  SEQLINE_RATE_PER_SEC: z.coerce.number().positive().default(200),
  SEQLINE_RATE_BURST: z.coerce.number().positive().default(400),
  SEQLINE_READ_FANOUT: z
    .enum(['0', '1', 'true', 'false'])
    .default('1')
    .transform((v) => v === '1' || v === 'true'),
  /** Bound on the inboxes and groups whose current seq the process keeps in memory. */
  SEQLINE_MAX_SEQ_KEYS: z.coerce.number().int().min(1).default(4_000_000),
  /** Bound on the inboxes whose head and write queue the process keeps in memory. */
  SEQLINE_MAX_CACHED_INBOXES: z.coerce.number().int().min(1).default(100_000),
  /** Bound on the items held in open offline-notification windows (at the bound the oldest windows notify early). */
  SEQLINE_MAX_NOTIFY_ITEMS: z.coerce.number().int().min(1).default(100_000),
  /** The demo page at / and POST /dev/token for loopback clients (docs/decisions.md); 0 turns both off. */
  SEQLINE_DEV_ROUTES: z
    .enum(['0', '1', 'true', 'false'])
    .default('1')
    .transform((v) => v === '1' || v === 'true'),
  /** The built demo page (npm run build -w @seqline/demo writes it). */
  SEQLINE_DEMO_DIR: z.string().default(DEFAULT_DEMO_DIR),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});

/**
 * `hookDefaults`: the hook variables, read by the same parser as the distributed processes (@seqline/runtime).
 * `allowedOrigins`: the browser origins the server accepts — SEQLINE_ALLOWED_ORIGINS when set; else, with
 * the dev routes on, the page's own origin only (docs/decisions.md, "First ten minutes"); else any.
 */
export type ServerConfig = z.infer<typeof envSchema> & {
  dataDir: string;
  secret: string;
  hookDefaults: TenantHooks;
  allowedOrigins: AllowedOrigins;
  /** SEQLINE_THREADS resolved (thread-count.ts); `threadsNote` says why it is 1 when that was not asked. */
  threads: number;
  threadsNote?: string;
};

export async function loadServerConfig(env: NodeJS.ProcessEnv): Promise<ServerConfig> {
  const parsed = envSchema.safeParse(env);
  const hooks = readHookDefaults(env);
  if (!parsed.success || hooks.issues.length > 0) {
    const lines = [...(parsed.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`), ...hooks.issues];
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const dataDir = resolve(parsed.data.SEQLINE_DATA_DIR);
  await mkdir(dataDir, { recursive: true });
  const secret = parsed.data.SEQLINE_SECRET ?? (await loadOrCreateSecret(dataDir));
  const allowedOrigins = parsed.data.SEQLINE_ALLOWED_ORIGINS ?? (parsed.data.SEQLINE_DEV_ROUTES ? 'same-origin' : undefined);
  const count = threadCount({ requested: parsed.data.SEQLINE_THREADS, transport: parsed.data.SEQLINE_TRANSPORT });
  if (!count.ok) throw new ConfigError(`invalid configuration:\n  SEQLINE_THREADS: ${count.problem}`);
  const threads = { threads: count.threads, ...(count.note !== undefined && { threadsNote: count.note }) };
  return { ...parsed.data, dataDir, secret, hookDefaults: hooks.hooks, allowedOrigins, ...threads };
}
