/**
 * The exact sliding log of one subject in memory: admitted-request timestamps, oldest first. Dropping expired
 * entries advances a head index instead of shifting the array, so an enterprise key's 100,000-entry log costs
 * O(log n) per request rather than O(n); the array is compacted once the dead prefix outweighs the live part.
 */
export class TimestampLog {
  private items: number[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  newest(): number | null {
    return this.size === 0 ? null : this.items[this.items.length - 1]!;
  }

  /** Inserts in order; callers compute `now` before awaiting, so timestamps may arrive slightly out of order. */
  add(ts: number): void {
    const last = this.items.length - 1;
    if (last < this.head || this.items[last]! <= ts) {
      this.items.push(ts);
      return;
    }
    this.items.splice(this.firstIndexAfter(ts), 0, ts);
  }

  /** Forgets every timestamp <= cutoff. */
  dropUpTo(cutoff: number): void {
    this.head = this.firstIndexAfter(cutoff);
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  /** Number of timestamps > cutoff. */
  countAfter(cutoff: number): number {
    return this.items.length - this.firstIndexAfter(cutoff);
  }

  /** The n-th (0-based, oldest first) timestamp > cutoff. */
  nthAfter(cutoff: number, n: number): number {
    const value = this.items[this.firstIndexAfter(cutoff) + n];
    if (value === undefined) throw new RangeError(`no entry ${n} after ${cutoff}`);
    return value;
  }

  private firstIndexAfter(cutoff: number): number {
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]! <= cutoff) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
