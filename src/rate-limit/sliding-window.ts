/**
 * The limiting algorithm, once, over any log that can count and index timestamps. The memory store runs it
 * directly; redis-scripts.ts is its line-by-line Lua twin (the shared store suite proves the two agree).
 *
 * Rules: a request is admitted when the window (`limit` per `windowSeconds`) and the burst window (`burstLimit`
 * per `burstWindowSeconds`) both have room; then it is recorded. A request that finds either full is refused and,
 * when `blockSeconds` > 0, blocks the subject from that moment for `blockSeconds`. Requests during a block are
 * refused without being recorded and do not extend it. A timestamp t counts while now - t < window, so it ages out
 * exactly `windowSeconds` after it was admitted.
 *
 * Several limits at once (`evaluateAll`: a key and its account): the request is admitted only when every one
 * admits, and then recorded in all; when any refuses, none records it. Each full one still starts its own block.
 */
import type { WindowOutcome } from './decision.js';
import type { RateLimitRule } from './rules.js';

export interface LogView {
  countAfter(cutoffMs: number): number;
  nthAfter(cutoffMs: number, n: number): number;
}

export interface Evaluation extends WindowOutcome {
  /** The caller must record `nowMs` in the log. */
  record: boolean;
  /** The caller must store `blockedUntilMs` as the subject's new block. */
  startBlock: boolean;
}

/**
 * `dryRun` (peek) answers the same question without a request to count: an admissible state reports the current
 * count rather than the count after recording, and the caller writes nothing.
 */
export function evaluate(
  log: LogView, blockedUntilMs: number, rule: RateLimitRule, nowMs: number, dryRun = false,
): Evaluation {
  const windowMs = rule.windowSeconds * 1000;
  const burstMs = rule.burstWindowSeconds * 1000;
  const used = log.countAfter(nowMs - windowMs);
  const burstUsed = log.countAfter(nowMs - burstMs);
  const oldestMs = used > 0 ? log.nthAfter(nowMs - windowMs, 0) : null;

  const reason =
    blockedUntilMs > nowMs ? 'blocked' : used >= rule.limit ? 'hourly' : burstUsed >= rule.burstLimit ? 'burst' : null;
  if (reason === null) {
    if (dryRun) return { allowed: true, reason, used, oldestMs, blockedUntilMs: null, retryAtMs: null, record: false, startBlock: false };
    return { allowed: true, reason, used: used + 1, oldestMs: oldestMs ?? nowMs, blockedUntilMs: null, retryAtMs: null, record: true, startBlock: false };
  }

  const startBlock = reason !== 'blocked' && rule.blockSeconds > 0 && !dryRun;
  const block =
    reason === 'blocked' ? blockedUntilMs : rule.blockSeconds > 0 ? nowMs + rule.blockSeconds * 1000 : null;
  // The earliest admission is after the block and once enough old requests have left each full window.
  let retryAtMs = block ?? nowMs;
  if (used >= rule.limit) {
    retryAtMs = Math.max(retryAtMs, slotFreesAt(log, nowMs - windowMs, used, rule.limit, windowMs));
  }
  if (burstUsed >= rule.burstLimit) {
    retryAtMs = Math.max(retryAtMs, slotFreesAt(log, nowMs - burstMs, burstUsed, rule.burstLimit, burstMs));
  }
  return { allowed: false, reason, used, oldestMs, blockedUntilMs: block, retryAtMs, record: false, startBlock };
}

export interface LogEntry {
  log: LogView;
  blockedUntilMs: number;
  rule: RateLimitRule;
}

/** Evaluates one request against every entry; see the header for how their verdicts combine. */
export function evaluateAll(entries: readonly LogEntry[], nowMs: number): Evaluation[] {
  const results = entries.map((entry) => evaluate(entry.log, entry.blockedUntilMs, entry.rule, nowMs));
  if (results.every((result) => result.allowed)) return results;
  // Not recorded anywhere: an entry that had room reports its current count, as a peek would.
  return results.map((result, i) =>
    result.allowed ? evaluate(entries[i]!.log, entries[i]!.blockedUntilMs, entries[i]!.rule, nowMs, true) : result,
  );
}

/** When the count drops below the limit: the (count - limit)-th oldest entry leaves the window. */
function slotFreesAt(log: LogView, cutoff: number, count: number, limit: number, windowMs: number): number {
  if (limit <= 0) return cutoff + 2 * windowMs; // never admits; answer "one window from now"
  return log.nthAfter(cutoff, count - limit) + windowMs;
}
