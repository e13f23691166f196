/**
 * A small in-process cache of promises per connection: concurrent callers share one load, a failed load is not kept,
 * and `stamp` (the connection's updatedAt) makes an entry of an edited connection miss at once, in every process.
 */
export class TtlCache<T> {
  private readonly entries = new Map<string, { stamp: string; expires: number; value: Promise<T> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  get(id: string, stamp: string, load: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(id);
    if (entry && entry.stamp === stamp && entry.expires > this.now()) return entry.value;
    const value = load();
    this.entries.delete(id);
    this.entries.set(id, { stamp, expires: this.now() + this.ttlMs, value });
    value.catch(() => {
      if (this.entries.get(id)?.value === value) this.entries.delete(id);
    });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  forget(id: string): void {
    this.entries.delete(id);
  }
}
