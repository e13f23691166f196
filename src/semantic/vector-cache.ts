/**
 * Each indexed table's vectors as one contiguous Float32Array (row-major, rows × dims) plus the row references, loaded
 * from the store once and kept until the table's index changes. `version` names the finished job the vectors belong
 * to, so a process also notices an index another process finished. Least recently used tables leave first once the
 * budget is exceeded.
 */
import type { SemanticVectorRepository } from '../repositories/semantic-vector-repository.js';

export interface TableVectors {
  version: string;
  dims: number;
  count: number;
  /** count × dims, unit rows. */
  matrix: Float32Array;
  /** Primary key JSON of each row. */
  keys: string[];
  bytes: number;
}

/** 1 GiB: about 500,000 rows of 512 dimensions. */
export const DEFAULT_CACHE_BYTES = 1 << 30;
const LOAD_PAGE_ROWS = 5000;

const cacheKey = (connectionId: string, tableName: string) => `${connectionId}\u0000${tableName}`;

export class VectorCache {
  private readonly entries = new Map<string, TableVectors>();
  private readonly loading = new Map<string, { version: string; promise: Promise<TableVectors> }>();
  private bytes = 0;

  constructor(
    private readonly vectors: Pick<SemanticVectorRepository, 'countFor' | 'page'>,
    private readonly budgetBytes = DEFAULT_CACHE_BYTES,
  ) {}

  /** The table's vectors of `providerId` as of `version`, from memory or loaded now (once, however many ask). */
  async get(connectionId: string, tableName: string, providerId: string, version: string): Promise<TableVectors> {
    const key = cacheKey(connectionId, tableName);
    const cached = this.entries.get(key);
    if (cached?.version === version) {
      this.entries.delete(key); // re-insert: most recently used last
      this.entries.set(key, cached);
      return cached;
    }
    const inFlight = this.loading.get(key);
    if (inFlight?.version === version) return inFlight.promise;
    const promise = this.load(connectionId, tableName, providerId, version).finally(() => {
      if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
    });
    this.loading.set(key, { version, promise });
    const loaded = await promise;
    this.store(key, loaded);
    return loaded;
  }

  /** Drops a table (its index changed), or every table of a connection. */
  invalidate(connectionId: string, tableName?: string): void {
    for (const [key, entry] of this.entries) {
      if (tableName === undefined ? key.startsWith(`${connectionId}\u0000`) : key === cacheKey(connectionId, tableName)) {
        this.entries.delete(key);
        this.bytes -= entry.bytes;
      }
    }
  }

  stats(): { tables: number; bytes: number } {
    return { tables: this.entries.size, bytes: this.bytes };
  }

  private store(key: string, loaded: TableVectors): void {
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.bytes -= previous.bytes;
    }
    this.entries.set(key, loaded);
    this.bytes += loaded.bytes;
    for (const [other, entry] of this.entries) {
      if (this.bytes <= this.budgetBytes || other === key) break;
      this.entries.delete(other);
      this.bytes -= entry.bytes;
    }
  }

  /** Pages through the store so only one page of driver buffers exists next to the growing matrix. */
  private async load(connectionId: string, tableName: string, providerId: string, version: string): Promise<TableVectors> {
    const expected = await this.vectors.countFor(connectionId, tableName, providerId);
    let matrix = new Float32Array(0);
    let bytesView = new Uint8Array(0);
    let dims = 0;
    let count = 0;
    const keys: string[] = [];
    for (let afterId = 0; ;) {
      const page = await this.vectors.page(connectionId, tableName, providerId, afterId, LOAD_PAGE_ROWS);
      for (const row of page) {
        if (dims === 0) {
          dims = row.vector.length / 4;
          matrix = new Float32Array(Math.max(expected, page.length) * dims);
          bytesView = new Uint8Array(matrix.buffer);
        }
        if (row.vector.length !== dims * 4) continue; // not this model's shape: never compared
        if ((count + 1) * dims > matrix.length) {
          const grown = new Float32Array(Math.max(matrix.length * 2, (count + 1) * dims));
          grown.set(matrix);
          matrix = grown;
          bytesView = new Uint8Array(matrix.buffer);
        }
        bytesView.set(row.vector, count * dims * 4);
        keys.push(row.primaryKey);
        count += 1;
      }
      if (page.length < LOAD_PAGE_ROWS) break;
      afterId = page[page.length - 1].id;
    }
    const trimmed = matrix.length === count * dims ? matrix : matrix.slice(0, count * dims);
    return { version, dims, count, matrix: trimmed, keys, bytes: trimmed.byteLength + keys.reduce((sum, k) => sum + 2 * k.length + 32, 0) };
  }
}
