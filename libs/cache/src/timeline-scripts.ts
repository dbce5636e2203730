/**
 * Lua for the per-inbox recent-entries cache. One sorted set per inbox holds BOTH the entries
 * (score = seq, member = entry JSON) and the coverage marker (score -1, member `~m:<from>:<head>`).
 *
 * Invariant (C): every durable entry of the inbox with from < seq <= head is a member, and every
 * member is a durable entry. Every script below turns a state satisfying C into another one,
 * and every argument it receives is a *timeless* claim of the form "the durable entries with
 * seq in (from, head] are exactly these" (true once, true forever, because an inbox only ever
 * grows above its head). So no interleaving, delay, retry, or late arrival of these calls —
 * from this process or another — can produce a state that claims an entry it lacks.
 *
 * Why a single key: marker and entries appear, expire, get evicted and get flushed together.
 * FLUSHALL, a restart without persistence, or an eviction can only remove the whole key (a
 * miss), never leave a marker that speaks for entries that are gone. A rolled-back copy after
 * failover is an older state that satisfied C, so it is stale at worst (a shorter answer),
 * never missing something in the middle; the epoch in the key name drops it altogether.
 */
import { LuaScript } from './lua.ts';

const HELPERS = `
local key = KEYS[1]
local function fmt(n) return string.format('%.0f', n) end
local function readMeta()
  local m = redis.call('ZRANGEBYSCORE', key, -1, -1)
  if #m == 0 then return nil, nil end
  local f, h = string.match(m[1], '^~m:(%d+):(%d+)$')
  return tonumber(f), tonumber(h)
end
`;

/**
 * Merges the claim "(ARGV[1], ARGV[2]] is exactly the entries in ARGV[6..] (seq, json pairs)".
 * ARGV[3] mode: 'probe' answers 'gap' instead of replacing a cache that ends below the claim
 * (the caller then looks up the real predecessor); 'force' replaces it. ARGV[4] max entries,
 * ARGV[5] TTL ms. Answers 'ok', 'gap' or 'older' (claim wholly below the cache: kept as is).
 */
export const MERGE_SCRIPT = new LuaScript('timeline-merge', `${HELPERS}
local from, head, mode = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local maxEntries, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local function writeMeta(f, h)
  redis.call('ZREMRANGEBYSCORE', key, -1, -1)
  redis.call('ZADD', key, -1, '~m:' .. fmt(f) .. ':' .. fmt(h))
end
local function addMissing()
  for i = 6, #ARGV, 2 do
    local s = ARGV[i]
    -- A seq already present keeps its member (another writer may have serialised it differently).
    if redis.call('ZCOUNT', key, s, s) == 0 then redis.call('ZADD', key, s, ARGV[i + 1]) end
  end
end
local cf, ch = readMeta()
if cf == nil then
  redis.call('DEL', key)
  addMissing()
  writeMeta(from, head)
elseif from <= ch and cf <= head then
  -- Overlapping or adjacent intervals: their union is again one complete interval.
  addMissing()
  writeMeta(math.min(from, cf), math.max(head, ch))
elseif from > ch then
  -- Unknown entries may sit in (ch, from]: the two intervals cannot be joined.
  if mode == 'probe' then return 'gap' end
  redis.call('DEL', key)
  addMissing()
  writeMeta(from, head)
else
  return 'older'
end
local count = redis.call('ZCARD', key) - 1
if count > maxEntries then
  -- Drop the oldest; the marker moves up to the highest dropped seq, keeping C.
  local cut = redis.call('ZRANGEBYSCORE', key, '(-1', '+inf', 'WITHSCORES', 'LIMIT', count - maxEntries - 1, 1)
  local cutSeq = tonumber(cut[2])
  redis.call('ZREMRANGEBYSCORE', key, '(-1', cutSeq)
  local f, h = readMeta()
  writeMeta(math.max(f, cutSeq), h)
end
redis.call('PEXPIRE', key, ttl)
return 'ok'
`);

/**
 * Entries with seq > ARGV[1], ascending, at most ARGV[2], when the cache covers that range:
 * answers {'hit', from, head, json...}, or {'miss'} / {'partial', from, head} /
 * {'behind', from, head}. 'behind' means the reader knows a seq above the cached head, so the
 * cache is provably stale: it must not answer "nothing new".
 */
export const READ_SCRIPT = new LuaScript('timeline-read', `${HELPERS}
local after, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local f, h = readMeta()
if f == nil then return {'miss'} end
if after < f then return {'partial', fmt(f), fmt(h)} end
if after > h then return {'behind', fmt(f), fmt(h)} end
local rows = redis.call('ZRANGEBYSCORE', key, '(' .. fmt(after), fmt(h), 'LIMIT', 0, limit)
local out = {'hit', fmt(f), fmt(h)}
for i = 1, #rows do out[#out + 1] = rows[i] end
return out
`);

/** The coverage marker alone: {from, head} or {}. */
export const META_SCRIPT = new LuaScript('timeline-meta', `${HELPERS}
local f, h = readMeta()
if f == nil then return {} end
return {fmt(f), fmt(h)}
`);

/** Drops the cache if it ends below ARGV[1], a durable head read just before. */
export const REPAIR_SCRIPT = new LuaScript('timeline-repair', `${HELPERS}
local f, h = readMeta()
if f ~= nil and h < tonumber(ARGV[1]) then redis.call('DEL', key) return 1 end
return 0
`);

/**
 * Dedup fast path: remembers appinfo → seq (score) for the most recent ARGV[1] appinfos of
 * an inbox, for ARGV[2] ms after its last append. ARGV[3..]: seq, appinfo pairs.
 */
export const REMEMBER_APPINFOS_SCRIPT = new LuaScript('dedup-remember', `
local key, maxKept, ttl = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 3, #ARGV, 2 do redis.call('ZADD', key, ARGV[i], ARGV[i + 1]) end
local count = redis.call('ZCARD', key)
if count > maxKept then redis.call('ZREMRANGEBYRANK', key, 0, count - maxKept - 1) end
redis.call('PEXPIRE', key, ttl)
return count
`);
