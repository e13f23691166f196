/**
 * The exact sliding log of one subject in memory: admitted-request timestamps (whole milliseconds), oldest first.
 *
 * Stored as one entry per distinct millisecond with a running count, not one per request: a key taking 25 requests
 * a millisecond under custom limits would otherwise hold an array of 90 million numbers an hour, which grows,
 * gets copied as it grows and makes every binary search walk a cold array. Answers stay exact: the count after any
 * cutoff and the n-th timestamp are read from the running counts.
 *
 * Dropping expired entries advances a head index instead of shifting the arrays, so a long log costs O(log n) per
 * request rather than O(n); the arrays are compacted once the dead prefix outweighs the live part.
 */
export class TimestampLog {
  /** Distinct timestamps, ascending. */
  private times: number[] = [];
  /** `ends[i]`: how many timestamps are logged at or before `times[i]` (dropped ones still count until compaction). */
  private ends: number[] = [];
  private head = 0;

  get size(): number {
    return this.total() - this.countBefore(this.head);
  }

  newest(): number | null {
    return this.size === 0 ? null : this.times[this.times.length - 1]!;
  }

  /** Inserts in order; callers compute `now` before awaiting, so timestamps may arrive slightly out of order. */
  add(ts: number): void {
    const last = this.times.length - 1;
    if (last < this.head || this.times[last]! < ts) {
      this.ends.push(this.total() + 1);
      this.times.push(ts);
      return;
    }
    if (this.times[last] === ts) {
      this.ends[last]! += 1;
      return;
    }
    // Out of order: a later millisecond is already logged. Rare, and the entries after it are few.
    let index = this.firstIndexAfter(ts);
    if (index > this.head && this.times[index - 1] === ts) {
      index -= 1;
    } else {
      this.times.splice(index, 0, ts);
      this.ends.splice(index, 0, this.countBefore(index));
    }
    for (let i = index; i < this.times.length; i++) this.ends[i]! += 1;
  }

  /** Forgets one timestamp `ts`, if one is logged. */
  remove(ts: number): void {
    const index = this.firstIndexAfter(ts) - 1;
    if (index < this.head || this.times[index] !== ts) return;
    for (let i = index; i < this.times.length; i++) this.ends[i]! -= 1;
    if (this.ends[index] === this.countBefore(index)) {
      this.times.splice(index, 1);
      this.ends.splice(index, 1);
    }
  }

  /** Forgets every timestamp <= cutoff. */
  dropUpTo(cutoff: number): void {
    this.head = this.firstIndexAfter(cutoff);
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      const dropped = this.countBefore(this.head);
      this.times = this.times.slice(this.head);
      this.ends = this.ends.slice(this.head).map((end) => end - dropped);
      this.head = 0;
    }
  }

  /** Number of timestamps > cutoff. */
  countAfter(cutoff: number): number {
    return this.total() - this.countBefore(this.firstIndexAfter(cutoff));
  }

  /** The n-th (0-based, oldest first) timestamp > cutoff. */
  nthAfter(cutoff: number, n: number): number {
    const first = this.firstIndexAfter(cutoff);
    const wanted = this.countBefore(first) + n;
    // The first entry whose running count passes `wanted` holds it.
    let lo = first;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ends[mid]! <= wanted) lo = mid + 1;
      else hi = mid;
    }
    if (lo === this.times.length || n < 0) throw new RangeError(`no entry ${n} after ${cutoff}`);
    return this.times[lo]!;
  }

  /** How many distinct milliseconds are held (what the log's memory is proportional to). */
  get entries(): number {
    return this.times.length - this.head;
  }

  /** Timestamps logged before entry `index`. */
  private countBefore(index: number): number {
    return index === 0 ? 0 : this.ends[index - 1]!;
  }

  private total(): number {
    return this.countBefore(this.ends.length);
  }

  /** The first index at or after the head whose timestamp is > cutoff. */
  private firstIndexAfter(cutoff: number): number {
    let lo = this.head;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[mid]! <= cutoff) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
