/**
 * The Lua scripts behind the Redis store. Redis runs a script atomically, so each decision (count, compare,
 * record or block) is one indivisible step however many processes share the server: none can admit past the limit.
 *
 * CONSUME is the Lua twin of `evaluate` in sliding-window.ts; keep the two in step (the shared store suite runs
 * the same cases against both). Cutoffs arrive precomputed as strings so Lua never formats a large number.
 */

/**
 * KEYS: log (sorted set, score = member = admission time), block (string: blocked-until ms).
 * ARGV: now, windowCutoff, burstCutoff, windowMs, burstMs, limit, burstLimit, blockMs, member, dryRun ('1' = peek:
 * write nothing, and report the current count instead of the count after recording).
 * Returns { allowed 0|1, reason 0 none|1 hourly|2 burst|3 blocked, used, oldest (-1 none), blockedUntil (0 none),
 * retryAt (0 none) }.
 */
export const CONSUME_LUA = `
local logKey, blockKey = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
local windowCutoff, burstCutoff = ARGV[2], ARGV[3]
local windowMs, burstMs = tonumber(ARGV[4]), tonumber(ARGV[5])
local limit, burstLimit = tonumber(ARGV[6]), tonumber(ARGV[7])
local blockMs = tonumber(ARGV[8])
local member = ARGV[9]
local dry = ARGV[10] == '1'

local function nthAfter(cutoff, n)
  local hit = redis.call('ZRANGEBYSCORE', logKey, '(' .. cutoff, '+inf', 'WITHSCORES', 'LIMIT', n, 1)
  return tonumber(hit[2])
end
local function slotFreesAt(cutoff, count, lim, span)
  if lim <= 0 then return tonumber(cutoff) + 2 * span end
  return nthAfter(cutoff, count - lim) + span
end

if not dry then redis.call('ZREMRANGEBYSCORE', logKey, '-inf', windowCutoff) end
local used = redis.call('ZCOUNT', logKey, '(' .. windowCutoff, '+inf')
local burstUsed = redis.call('ZCOUNT', logKey, '(' .. burstCutoff, '+inf')
local oldest = -1
if used > 0 then oldest = nthAfter(windowCutoff, 0) end
local blockedUntil = tonumber(redis.call('GET', blockKey) or '0')

local reason = 0
if blockedUntil > now then reason = 3
elseif used >= limit then reason = 1
elseif burstUsed >= burstLimit then reason = 2 end

if reason == 0 then
  if dry then return { 1, 0, used, oldest, 0, 0 } end
  redis.call('ZADD', logKey, now, member)
  -- Expire the log when its newest entry leaves the window, never sooner.
  local newest = redis.call('ZRANGE', logKey, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', logKey, math.max(1, tonumber(newest[2]) + windowMs - now))
  if oldest < 0 then oldest = now end
  return { 1, 0, used + 1, oldest, 0, 0 }
end

local block = 0
if reason == 3 then
  block = blockedUntil
elseif blockMs > 0 then
  block = now + blockMs
  if not dry then redis.call('SET', blockKey, block, 'PX', blockMs) end
end
local retryAt = now
if block > 0 then retryAt = block end
if used >= limit then retryAt = math.max(retryAt, slotFreesAt(windowCutoff, used, limit, windowMs)) end
if burstUsed >= burstLimit then
  retryAt = math.max(retryAt, slotFreesAt(burstCutoff, burstUsed, burstLimit, burstMs))
end
return { 0, reason, used, oldest, block, retryAt }
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
