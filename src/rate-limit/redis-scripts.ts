/**
 * The Lua scripts behind the Redis store. Redis runs a script atomically, so each decision (count, compare,
 * record or block) is one indivisible step however many processes share the server: none can admit past the limit.
 *
 * CONSUME is the Lua twin of `evaluate` in sliding-window.ts; keep the two in step (the shared store suite runs
 * the same cases against both). Cutoffs arrive precomputed as strings so Lua never formats a large number.
 */

/**
 * One request against n limits at once (n = 1 for a plain consume or peek). Admitted only when every limit admits,
 * then recorded in all of them; otherwise in none, and each full limit starts its own block (`evaluateAll`).
 * KEYS: per limit i, log (sorted set, score = member = admission time) at 2i-1 and block (string: blocked-until ms)
 * at 2i. ARGV: now, n, member, dryRun ('1' = peek: write nothing, and report the current count instead of the
 * count after recording), then per limit 7 values: windowCutoff, burstCutoff, windowMs, burstMs, limit, burstLimit,
 * blockMs.
 * Returns, per limit, 6 numbers: allowed 0|1, reason 0 none|1 hourly|2 burst|3 blocked, used, oldest (-1 none),
 * blockedUntil (0 none), retryAt (0 none).
 */
export const CONSUME_LUA = `
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local member = ARGV[3]
local dry = ARGV[4] == '1'

local function nthAfter(logKey, cutoff, k)
  local hit = redis.call('ZRANGEBYSCORE', logKey, '(' .. cutoff, '+inf', 'WITHSCORES', 'LIMIT', k, 1)
  return tonumber(hit[2])
end
local function slotFreesAt(logKey, cutoff, count, lim, span)
  if lim <= 0 then return tonumber(cutoff) + 2 * span end
  return nthAfter(logKey, cutoff, count - lim) + span
end

-- First every limit is read and judged; nothing is written until all verdicts are known.
local limits = {}
local admitAll = true
for i = 1, n do
  local a = 4 + (i - 1) * 7
  local l = {
    logKey = KEYS[2 * i - 1], blockKey = KEYS[2 * i],
    windowCutoff = ARGV[a + 1], burstCutoff = ARGV[a + 2],
    windowMs = tonumber(ARGV[a + 3]), burstMs = tonumber(ARGV[a + 4]),
    limit = tonumber(ARGV[a + 5]), burstLimit = tonumber(ARGV[a + 6]), blockMs = tonumber(ARGV[a + 7]),
  }
  if not dry then redis.call('ZREMRANGEBYSCORE', l.logKey, '-inf', l.windowCutoff) end
  l.used = redis.call('ZCOUNT', l.logKey, '(' .. l.windowCutoff, '+inf')
  l.burstUsed = redis.call('ZCOUNT', l.logKey, '(' .. l.burstCutoff, '+inf')
  l.oldest = -1
  if l.used > 0 then l.oldest = nthAfter(l.logKey, l.windowCutoff, 0) end
  l.blockedUntil = tonumber(redis.call('GET', l.blockKey) or '0')
  l.reason = 0
  if l.blockedUntil > now then l.reason = 3
  elseif l.used >= l.limit then l.reason = 1
  elseif l.burstUsed >= l.burstLimit then l.reason = 2 end
  if l.reason ~= 0 then admitAll = false end
  limits[i] = l
end

local out = {}
for i = 1, n do
  local l = limits[i]
  if l.reason == 0 then
    -- Refused by another limit (or a peek): not recorded, reported at the current count.
    if dry or not admitAll then
      table.insert(out, 1); table.insert(out, 0); table.insert(out, l.used); table.insert(out, l.oldest)
      table.insert(out, 0); table.insert(out, 0)
    else
      redis.call('ZADD', l.logKey, now, member)
      -- Expire the log when its newest entry leaves the window, never sooner.
      local newest = redis.call('ZRANGE', l.logKey, -1, -1, 'WITHSCORES')
      redis.call('PEXPIRE', l.logKey, math.max(1, tonumber(newest[2]) + l.windowMs - now))
      local oldest = l.oldest
      if oldest < 0 then oldest = now end
      table.insert(out, 1); table.insert(out, 0); table.insert(out, l.used + 1); table.insert(out, oldest)
      table.insert(out, 0); table.insert(out, 0)
    end
  else
    local block = 0
    if l.reason == 3 then
      block = l.blockedUntil
    elseif l.blockMs > 0 then
      block = now + l.blockMs
      if not dry then redis.call('SET', l.blockKey, block, 'PX', l.blockMs) end
    end
    local retryAt = now
    if block > 0 then retryAt = block end
    if l.used >= l.limit then
      retryAt = math.max(retryAt, slotFreesAt(l.logKey, l.windowCutoff, l.used, l.limit, l.windowMs))
    end
    if l.burstUsed >= l.burstLimit then
      retryAt = math.max(retryAt, slotFreesAt(l.logKey, l.burstCutoff, l.burstUsed, l.burstLimit, l.burstMs))
    end
    table.insert(out, 0); table.insert(out, l.reason); table.insert(out, l.used); table.insert(out, l.oldest)
    table.insert(out, block); table.insert(out, retryAt)
  end
end
return out
`;

/**
 * KEYS: leases (sorted set, member = lease id, score = lease expiry ms). ARGV: now, max, leaseId, expiresAt.
 * Returns 1 when the lease is held (new or renewed), 0 when every slot is taken by an unexpired lease.
 */
export const ACQUIRE_LUA = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[1])
if not redis.call('ZSCORE', key, ARGV[3]) and redis.call('ZCARD', key) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', key, ARGV[4], ARGV[3])
local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', key, math.max(1, tonumber(newest[2]) - now))
return 1
`;

/** Takes back one request recorded at a time: KEYS[1] log, ARGV[1] the admission time (its score). */
export const REFUND_LUA = `
local hit = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1], 'LIMIT', 0, 1)
if hit[1] then redis.call('ZREM', KEYS[1], hit[1]) end
return 0
`;
