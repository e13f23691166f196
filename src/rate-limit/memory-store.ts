/**
 * Rate-limit state in a Map: exact for one process, the default when REDIS_URL is unset and the fallback while
 * Redis is down. Memory stays bounded: a subject's log holds one entry per distinct millisecond, never more than
 * its limit nor than the milliseconds in its window, and a sweep (at most once per `sweepIntervalMs` of the injected
 * clock) deletes subjects whose requests, block and leases have all expired.
 */
import { combine, toDecision, type RateLimitDecision } from './decision.js';
import type { RateLimitRule } from './rules.js';
import { evaluate, evaluateAll } from './sliding-window.js';
import type { CombinedDecision, LimitCheck, RateLimitStore, StoreStatus } from './store.js';
import { TimestampLog } from './timestamp-log.js';

interface SubjectState {
  log: TimestampLog;
  blockedUntilMs: number;
  /** When nothing about this subject matters any more (newest request + window, or block end). */
  expiresAtMs: number;
}

export interface MemoryStoreOptions {
  sweepIntervalMs?: number;
}

export class MemoryStore implements RateLimitStore {
  private readonly subjects = new Map<string, SubjectState>();
  private readonly leases = new Map<string, Map<string, number>>();
  private readonly sweepIntervalMs: number;
  private lastSweepMs = -Infinity;

  constructor(options: MemoryStoreOptions = {}) {
    this.sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
  }

  async consume(subject: string, rule: RateLimitRule, timeMs: number): Promise<RateLimitDecision> {
    return (await this.consumeAll([{ subject, rule }], timeMs)).decisions[0]!;
  }

  async consumeAll(checks: readonly LimitCheck[], timeMs: number): Promise<CombinedDecision> {
    const nowMs = Math.floor(timeMs); // whole milliseconds, as in Redis
    this.sweepIfDue(nowMs);
    const entries = checks.map(({ subject, rule }) => {
      const state = this.subjects.get(subject) ?? { log: new TimestampLog(), blockedUntilMs: 0, expiresAtMs: 0 };
      state.log.dropUpTo(nowMs - rule.windowSeconds * 1000);
      return { subject, rule, state, log: state.log, blockedUntilMs: state.blockedUntilMs };
    });
    const results = evaluateAll(entries, nowMs);
    return combine(entries.map(({ subject, rule, state }, i) => {
      const result = results[i]!;
      if (result.record) state.log.add(nowMs);
      if (result.startBlock) state.blockedUntilMs = result.blockedUntilMs!;
      state.expiresAtMs = Math.max((state.log.newest() ?? -Infinity) + rule.windowSeconds * 1000, state.blockedUntilMs);
      if (state.expiresAtMs > nowMs) this.subjects.set(subject, state);
      return toDecision(result, rule, nowMs);
    }));
  }

  async peek(subject: string, rule: RateLimitRule, timeMs: number): Promise<RateLimitDecision> {
    const nowMs = Math.floor(timeMs);
    const state = this.subjects.get(subject);
    const result = evaluate(state?.log ?? new TimestampLog(), state?.blockedUntilMs ?? 0, rule, nowMs, true);
    return toDecision(result, rule, nowMs);
  }

  async refund(subject: string, atMs: number): Promise<void> {
    this.subjects.get(subject)?.log.remove(Math.floor(atMs));
  }

  async acquireConcurrency(
    subject: string, max: number, leaseId: string, nowMs: number, leaseTtlMs: number,
  ): Promise<boolean> {
    this.sweepIfDue(nowMs);
    const held = this.leases.get(subject) ?? new Map<string, number>();
    // Expired leases only matter when they would fill the limit, so they are dropped then (and by the sweep),
    // not on every request: a busy key holds as many leases as requests in flight.
    if (!held.has(leaseId) && held.size >= max) {
      for (const [id, expiresAtMs] of held) if (expiresAtMs <= nowMs) held.delete(id);
      if (held.size >= max) return false;
    }
    held.set(leaseId, nowMs + leaseTtlMs);
    this.leases.set(subject, held);
    return true;
  }

  async releaseConcurrency(subject: string, leaseId: string): Promise<void> {
    const held = this.leases.get(subject);
    if (!held) return;
    held.delete(leaseId);
    if (held.size === 0) this.leases.delete(subject);
  }

  async ping(): Promise<boolean> {
    return true;
  }

  status(): StoreStatus {
    return { mode: 'memory', redisUp: false, lastError: null };
  }

  async close(): Promise<void> {
    this.subjects.clear();
    this.leases.clear();
  }

  /** How many subjects and lease sets are held: lets tests prove memory stays bounded. */
  size(): { subjects: number; leaseSubjects: number } {
    return { subjects: this.subjects.size, leaseSubjects: this.leases.size };
  }

  /** Deletes everything that has expired by `nowMs`; runs by itself every `sweepIntervalMs`. */
  sweep(nowMs: number): void {
    this.lastSweepMs = nowMs;
    for (const [subject, state] of this.subjects) if (state.expiresAtMs <= nowMs) this.subjects.delete(subject);
    for (const [subject, held] of this.leases) {
      for (const [id, expiresAtMs] of held) if (expiresAtMs <= nowMs) held.delete(id);
      if (held.size === 0) this.leases.delete(subject);
    }
  }

  private sweepIfDue(nowMs: number): void {
    if (nowMs - this.lastSweepMs >= this.sweepIntervalMs) this.sweep(nowMs);
  }
}
