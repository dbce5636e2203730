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
 *
 * Freshness (F): C says nothing of entries above the head, which a writer that died between its
 * durable append and its cache write leaves out. So a second key per inbox, the confirmation
 * (`tlc`, same hash tag), lives for `confirmMs` after a claim that reached the durable head
 * (an append, a short read of the store, a durable head read at or below the cached head), and
 * a cached answer is given only while it lives: a cache left behind is answered from the store
 * within `confirmMs` (and filled again from there).
 */
import { LuaScript } from './lua.ts';

const HELPERS = `
local key = KEYS[1]
local function fmt(n) return string.format('%.0f', n) end
local function readMeta(k)
  local m = redis.call('ZRANGEBYSCORE', k, -1, -1)
  if #m == 0 then return nil, nil end
  local f, h = string.match(m[1], '^~m:(%d+):(%d+)$')
  return tonumber(f), tonumber(h)
end
`;

/**
 * merge(k, a): merges the claim "(ARGV[a], ARGV[a+1]] is exactly the entries in ARGV[a+5..]
 * (seq, json pairs)" into the cache at k. ARGV[a+2] mode: 'probe' answers 'gap' instead of
 * replacing a cache that ends below the claim (the caller then looks up the real predecessor);
 * 'force' replaces it. ARGV[a+3] max entries, ARGV[a+4] TTL ms. Answers 'ok', 'gap' or 'older'
 * (claim wholly below the cache: kept as is).
 *
 * The marker is written once, last (the script is atomic: nothing sees the steps). A full
 * cache is cut back by a sixteenth of its size at once, so most appends to a busy inbox skip
 * the cut (it cost each of them five more calls when it trimmed one entry per append).
 */
const MERGE_FUNCTION = `
local function merge(k, a, confirmKey)
  local from, head, mode = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), ARGV[a + 2]
  local maxEntries, ttl, confirmMs = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
  -- The claim reached the durable head and the cache now ends at or above it: fresh (F) for
  -- what is left of confirmMs (0: a read that took all of it confirms nothing).
  local function confirm() if confirmMs > 0 then redis.call('SET', confirmKey, '1', 'PX', confirmMs) end end
  local function addMissing()
    for i = a + 6, #ARGV, 2 do
      local s = ARGV[i]
      -- A seq already present keeps its member (another writer may have serialised it differently).
      if redis.call('ZCOUNT', k, s, s) == 0 then redis.call('ZADD', k, s, ARGV[i + 1]) end
    end
  end
  -- nf, nh: the marker to write; markers: how many the key holds now (the old one, or none).
  local nf, nh, markers
  local cf, ch = readMeta(k)
  if cf == nil then
    redis.call('DEL', k)
    nf, nh, markers = from, head, 0
  elseif from <= ch and cf <= head then
    -- Overlapping or adjacent intervals: their union is again one complete interval.
    nf, nh, markers = math.min(from, cf), math.max(head, ch), 1
  elseif from > ch then
    -- Unknown entries may sit in (ch, from]: the two intervals cannot be joined.
    if mode == 'probe' then return 'gap' end
    redis.call('DEL', k)
    nf, nh, markers = from, head, 0
  else
    confirm()
    return 'older'
  end
  addMissing()
  local count = redis.call('ZCARD', k) - markers
  if count > maxEntries then
    -- Drop the oldest down to maxEntries minus a sixteenth; the marker moves up to the highest
    -- dropped seq, keeping C.
    local keep = maxEntries - math.floor(maxEntries / 16)
    local cut = redis.call('ZRANGEBYSCORE', k, '(-1', '+inf', 'WITHSCORES', 'LIMIT', count - keep - 1, 1)
    local cutSeq = tonumber(cut[2])
    redis.call('ZREMRANGEBYSCORE', k, '(-1', cutSeq)
    nf = math.max(nf, cutSeq)
  end
  if markers == 1 then redis.call('ZREMRANGEBYSCORE', k, -1, -1) end
  redis.call('ZADD', k, -1, '~m:' .. fmt(nf) .. ':' .. fmt(nh))
  redis.call('PEXPIRE', k, ttl)
  confirm()
  return 'ok'
end
`;

/**
 * remember(k, a, b): the dedup fast path at k remembers dedup key → seq (score) for the most
 * recent ARGV[a] dedup keys of an inbox (at most; cut back by a sixteenth at once, like the
 * entries), for ARGV[a+1] ms after its last append; ARGV[a+2..b] are seq, key pairs.
 */
const REMEMBER_FUNCTION = `
local function remember(k, a, b)
  local maxKept, ttl = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  for i = a + 2, b, 2 do redis.call('ZADD', k, ARGV[i], ARGV[i + 1]) end
  local count = redis.call('ZCARD', k)
  if count > maxKept then redis.call('ZREMRANGEBYRANK', k, 0, count - (maxKept - math.floor(maxKept / 16)) - 1) end
  redis.call('PEXPIRE', k, ttl)
  return count
end
`;

/** merge(KEYS[1], 1, KEYS[2]): ARGV = from, head, mode, max entries, TTL ms, confirmation ms (F), then seq/json pairs. */
export const MERGE_SCRIPT = new LuaScript(
  'timeline-merge',
  `${HELPERS}${MERGE_FUNCTION}
return merge(key, 1, KEYS[2])
`,
);

/**
 * One append's two cache writes in one call (all three keys carry the inbox's hash tag, so
 * they share a cluster slot): remember(KEYS[2], ...) then merge(KEYS[1], ..., KEYS[3]) in
 * 'probe' mode. ARGV = n (the number of seq/key pairs), max kept, TTL ms, the 2n pairs, then
 * MERGE_SCRIPT's arguments. Answers merge's answer.
 */
export const APPEND_SCRIPT = new LuaScript(
  'timeline-append',
  `${HELPERS}${MERGE_FUNCTION}${REMEMBER_FUNCTION}
local n = tonumber(ARGV[1])
remember(KEYS[2], 2, 3 + 2 * n)
return merge(key, 4 + 2 * n, KEYS[3])
`,
);

/**
 * Entries with seq > ARGV[1], ascending, at most ARGV[2], when the cache covers that range:
 * answers {'hit', from, head, json...}, or {'miss'} / {'partial', from, head} /
 * {'behind', from, head} / {'unconfirmed', from, head}. 'behind' means the reader knows a seq
 * above the cached head, so the cache is provably stale: it must not answer "nothing new".
 * 'unconfirmed': the answer would reach the cached head (saying "nothing newer") and the
 * confirmation KEYS[2] has lapsed (F): the store must answer.
 */
export const READ_SCRIPT = new LuaScript(
  'timeline-read',
  `${HELPERS}
local after, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local f, h = readMeta(key)
if f == nil then return {'miss'} end
if after < f then return {'partial', fmt(f), fmt(h)} end
if after > h then return {'behind', fmt(f), fmt(h)} end
local rows = redis.call('ZRANGEBYSCORE', key, '(' .. fmt(after), fmt(h), 'LIMIT', 0, limit)
if #rows < limit and redis.call('EXISTS', KEYS[2]) == 0 then return {'unconfirmed', fmt(f), fmt(h)} end
local out = {'hit', fmt(f), fmt(h)}
for i = 1, #rows do out[#out + 1] = rows[i] end
return out
`,
);

/** The coverage marker alone: {from, head, 1 if confirmed (KEYS[2], F) else 0} or {}. */
export const META_SCRIPT = new LuaScript(
  'timeline-meta',
  `${HELPERS}
local f, h = readMeta(key)
if f == nil then return {} end
return {fmt(f), fmt(h), redis.call('EXISTS', KEYS[2])}
`,
);

/**
 * After a durable head read of ARGV[1]: a cache ending below it missed a write and is dropped
 * (1); one ending at or above it is complete as of that read and is confirmed for ARGV[2] ms (F).
 */
export const HEAD_CHECK_SCRIPT = new LuaScript(
  'timeline-head-check',
  `${HELPERS}
local f, h = readMeta(key)
if f == nil then return 0 end
if h < tonumber(ARGV[1]) then redis.call('DEL', key) return 1 end
if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[2], '1', 'PX', ARGV[2]) end
return 0
`,
);

/** remember(KEYS[1], 1, #ARGV): ARGV = max kept, TTL ms, then seq/key pairs. */
export const REMEMBER_APPINFOS_SCRIPT = new LuaScript(
  'dedup-remember',
  `${REMEMBER_FUNCTION}
return remember(KEYS[1], 1, #ARGV)
`,
);
