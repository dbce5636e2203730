/**
 * GroupStore decorator: caches getGroup, getMembership, listMembers and listMemberships in one
 * Redis hash per group, with a short TTL, and drops that hash after every write. Writes go to
 * the durable store first; the hash is deleted once the write has settled (also when it
 * failed: a timed-out write may have applied).
 *
 * The classic cache-aside race (a reader fetches the old value, a writer writes and deletes,
 * the reader then stores the old value for a whole TTL) is closed with a version token kept
 * in the same hash: a reader takes the token before reading the store and may fill only if
 * the token is still there afterwards. The writer's DEL removes the token with the values, so
 * a fill based on a read from before the write finds no token (or a new one) and is refused.
 */
import { randomBytes } from 'node:crypto';
import { LruMap } from '@seqline/core';
import type {
  GroupKey,
  GroupMessageRef,
  GroupRecord,
  GroupStore,
  InboxKey,
  Membership,
  RecipientsRecord,
  GroupCreation,
  GroupUpdate,
  MembershipChange,
  MemberRef,
} from '@seqline/core';
import { RedisGuard, type RedisCacheOptions } from './guard.ts';
import { LuaScript } from './lua.ts';

export interface CachedGroupOptions extends RedisCacheOptions {
  /** Lifetime of a group's cached hash, counted from its creation (not extended by reads). Default 30 s. */
  ttlMs?: number;
  /**
   * Member lists kept decoded in this process, in members over all groups (default 200 000;
   * 0 = none). A list is reused while its hash's version token is unchanged, which Redis
   * confirms on every read without sending the list again.
   */
  decodedMembers?: number;
}

export interface GroupCacheStats {
  hits: number;
  misses: number;
  invalidations: number;
  /** Hits answered from a decoded list this process held (Redis only confirmed the version). */
  decodedHits: number;
}

const VERSION_FIELD = '~v';

/**
 * Version tokens need only be unique, not unpredictable: a random prefix per process and a
 * counter. (A randomBytes(9) per lookup was 3 % of a gateway's CPU on huge-group sends.)
 */
const TOKEN_PREFIX = randomBytes(9).toString('base64url');
let tokenCounter = 0;
const freshToken = (): string => `${TOKEN_PREFIX}.${(tokenCounter++).toString(36)}`;

/**
 * Answers {token} or {token, value}; creates the token (and the hash's TTL) when absent. When
 * the caller already holds the field as of token ARGV[4], answers {token, 1} instead of the value.
 */
const LOOKUP_SCRIPT = new LuaScript(
  'group-lookup',
  `
local v = redis.call('HGET', KEYS[1], '${VERSION_FIELD}')
if not v then
  redis.call('HSET', KEYS[1], '${VERSION_FIELD}', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {ARGV[2]}
end
if ARGV[4] == v and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {v, 1} end
local value = redis.call('HGET', KEYS[1], ARGV[1])
if value then return {v, value} end
return {v}
`,
);

/** Stores ARGV[3] under field ARGV[1] only if the version token is still ARGV[2]. */
const FILL_SCRIPT = new LuaScript(
  'group-fill',
  `
if redis.call('HGET', KEYS[1], '${VERSION_FIELD}') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`,
);

export class CachedGroupStore implements GroupStore {
  private readonly guard: RedisGuard;
  private readonly ttlMs: number;
  private readonly counters: GroupCacheStats = { hits: 0, misses: 0, invalidations: 0, decodedHits: 0 };
  /**
   * Decoded member lists by hash key and field, with the version token they belong to. A huge
   * group's notify read its whole member list from Redis and parsed it for every push: 150 KB
   * and 9 % of a worker's CPU at 640 messages a second to a 2 108-member group.
   */
  private readonly decoded: LruMap<string, { token: string; value: readonly unknown[] }>;

  constructor(
    private readonly inner: GroupStore,
    options: CachedGroupOptions,
  ) {
    this.guard = new RedisGuard(options, 'group-cache');
    this.ttlMs = options.ttlMs ?? 30_000;
    this.decoded = new LruMap(options.decodedMembers ?? 200_000, (entry) => entry.value.length);
  }

  async createGroup(input: GroupCreation): Promise<boolean> {
    return this.writing(input.group.key, () => this.inner.createGroup(input));
  }

  async updateGroup(input: GroupUpdate): Promise<void> {
    return this.writing(input.key, () => this.inner.updateGroup(input));
  }

  async renameGroup(input: { key: GroupKey; name: string }): Promise<{ nameRev: number }> {
    return this.writing(input.key, () => this.inner.renameGroup(input));
  }

  async addMembers(input: MembershipChange): Promise<string[]> {
    return this.writing(input.key, () => this.inner.addMembers(input));
  }

  async removeMembers(input: MembershipChange): Promise<string[]> {
    return this.writing(input.key, () => this.inner.removeMembers(input));
  }

  getGroup(key: GroupKey): Promise<GroupRecord | null> {
    return this.cached(key, 'g', () => this.inner.getGroup(key));
  }

  getMembership(input: MemberRef): Promise<Membership | null> {
    return this.cached(input.key, `m:${input.user}`, () => this.inner.getMembership(input));
  }

  listMembers(key: GroupKey): Promise<string[]> {
    return this.cached(key, 'L', () => this.inner.listMembers(key));
  }

  listMemberships(key: GroupKey): Promise<Membership[]> {
    return this.cached(key, 'M', () => this.inner.listMemberships(key));
  }

  /** Not cached: it changes with every membership change of the user, in any group. */
  groupsOf(inbox: InboxKey): Promise<GroupKey[]> {
    return this.inner.groupsOf(inbox);
  }

  /** Not cached: written once per group send and read only by a resend, a recall or an edit. */
  recordRecipients(input: RecipientsRecord): Promise<void> {
    return this.inner.recordRecipients(input);
  }

  recordedRecipients(input: GroupMessageRef): Promise<string[] | null> {
    return this.inner.recordedRecipients(input);
  }

  stats(): GroupCacheStats {
    return { ...this.counters };
  }

  /** Stops background retries. The Redis client belongs to the caller and stays open. */
  close(): void {
    this.guard.close();
  }

  private async writing<T>(group: GroupKey, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      const key = this.guard.key('grp', group);
      if (key !== null) {
        this.counters.invalidations++;
        await this.guard.invalidate(key);
      }
    }
  }

  /** Cache-aside read of one field; any Redis trouble means "read the store". */
  private async cached<T>(group: GroupKey, field: string, load: () => Promise<T>): Promise<T> {
    const key = this.guard.key('grp', group);
    if (key === null || this.guard.isPending(key)) {
      this.counters.misses++;
      return load();
    }
    // Member lists ('L', 'M') are kept decoded; a hash generation never changes a filled field
    // (every write deletes the hash, and with it the token), so the token identifies the value.
    const decodedKey = field === 'L' || field === 'M' ? `${key}\u0000${field}` : undefined;
    const held = decodedKey === undefined ? undefined : this.decoded.get(decodedKey);
    const fresh = freshToken();
    const looked = await this.guard.attempt('group-lookup', () =>
      LOOKUP_SCRIPT.run(this.guard.redis, [key], [field, fresh, this.ttlMs, held?.token ?? '']),
    );
    const reply = looked.ok && Array.isArray(looked.value) ? looked.value : [];
    const [token, value] = reply as [unknown, unknown];
    if (value === 1 && held !== undefined && token === held.token) {
      this.counters.hits++;
      this.counters.decodedHits++;
      return held.value as T;
    }
    if (typeof value === 'string') {
      this.counters.hits++;
      return this.keepDecoded(decodedKey, token, JSON.parse(value) as T);
    }
    this.counters.misses++;
    const loaded = await load();
    if (typeof token === 'string') {
      const filled = await this.guard.attempt('group-fill', () =>
        FILL_SCRIPT.run(this.guard.redis, [key], [field, token, JSON.stringify(loaded)]),
      );
      if (filled.ok && filled.value === 1) return this.keepDecoded(decodedKey, token, loaded);
    }
    return loaded;
  }

  /** Keeps a member list shared by later readers: frozen, so that none can change it for others. */
  private keepDecoded<T>(decodedKey: string | undefined, token: unknown, value: T): T {
    if (decodedKey === undefined || typeof token !== 'string' || !Array.isArray(value)) return value;
    for (const item of value) Object.freeze(item);
    this.decoded.set(decodedKey, { token, value: Object.freeze(value) });
    return value;
  }
}
