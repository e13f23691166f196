import type { Table } from '@lancedb/lancedb';

/**
 * A space's table version as LanceDB last gave it, reused for a short while. Every search asks for the version it
 * reads (to know whether the rows and words held in memory are that version's), and so does the background reading
 * of rows into memory: each call crosses into LanceDB's runtime and back, a turn of the event loop that waits behind
 * every other request under load. Between two of LanceDB's own checks for other processes' writes (its read
 * consistency interval) the answer is the same anyway; the store gives LanceDB nine tenths of
 * INDEX_READ_CONSISTENCY_MS and reuses an answer for the last tenth, so another process's write is still seen within
 * the setting. This process's own writes are seen at once: each write forgets the version (`forget`), and an answer
 * asked for before a write is not kept after it.
 */
export class SeenVersion {
  private value: number | null = null;
  private readAt = 0;
  private asking: Promise<number> | null = null;
  private generation = 0;

  constructor(
    private readonly reuseMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The table's version: the last answer while it is fresh, else LanceDB's (one call for all who ask meanwhile). */
  async of(table: Pick<Table, 'version'>): Promise<number> {
    if (this.value !== null && this.now() - this.readAt < this.reuseMs) return this.value;
    if (this.asking) return this.asking;
    const generation = this.generation;
    const asking = table.version().then((version) => {
      if (generation === this.generation) {
        this.value = version;
        this.readAt = this.now();
      }
      return version;
    }).finally(() => {
      if (this.asking === asking) this.asking = null;
    });
    if (this.reuseMs > 0) this.asking = asking;
    return asking;
  }

  /** The table was written (or is being written): the next caller asks LanceDB again. */
  forget(): void {
    this.generation += 1;
    this.value = null;
    this.asking = null;
  }
}
