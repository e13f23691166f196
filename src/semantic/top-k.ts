/**
 * Keeps the `k` best-scoring items seen so far in a binary min-heap: O(n log k) over n candidates, and memory for k
 * items only, whatever n is. Ties keep the item offered first (stable ranking across runs).
 */
export class TopK<T> {
  private readonly scores: number[] = [];
  private readonly order: number[] = [];
  private readonly items: T[] = [];
  private offered = 0;

  constructor(private readonly k: number) {}

  /** The lowest score that still enters; -Infinity until the heap is full. */
  get threshold(): number {
    return this.items.length < this.k ? -Infinity : this.scores[0];
  }

  offer(score: number, item: T): void {
    const seq = this.offered;
    this.offered += 1;
    if (this.k <= 0) return;
    if (this.items.length < this.k) {
      this.scores.push(score);
      this.order.push(seq);
      this.items.push(item);
      this.siftUp(this.items.length - 1);
    } else if (score > this.scores[0]) {
      this.scores[0] = score;
      this.order[0] = seq;
      this.items[0] = item;
      this.siftDown(0);
    }
  }

  /** Best first. */
  sorted(): Array<{ score: number; item: T }> {
    return this.items
      .map((item, i) => ({ score: this.scores[i], seq: this.order[i], item }))
      .sort((a, b) => b.score - a.score || a.seq - b.seq)
      .map(({ score, item }) => ({ score, item }));
  }

  /** Heap order: lower score first; at equal score the later offer is "lower", so it leaves first. */
  private less(i: number, j: number): boolean {
    return this.scores[i] < this.scores[j] || (this.scores[i] === this.scores[j] && this.order[i] > this.order[j]);
  }

  private swap(i: number, j: number): void {
    [this.scores[i], this.scores[j]] = [this.scores[j], this.scores[i]];
    [this.order[i], this.order[j]] = [this.order[j], this.order[i]];
    [this.items[i], this.items[j]] = [this.items[j], this.items[i]];
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const n = this.items.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < n && this.less(left, smallest)) smallest = left;
      if (right < n && this.less(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
