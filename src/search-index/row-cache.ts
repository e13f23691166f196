/**
 * The columns a search reads of a space's rows, held in this process for one version of a space on an object store.
 *
 * From an object store, each row a search brings back costs requests of its own (a ranged GET per page of each
 * column it reads: the ranked rows' ids and headings, the page's stored fields, the text relevance feedback reads),
 * about a millisecond each even on loopback, where a local folder's reads are answered by the page cache. With the
 * version's rows here, a search asks the store for its ranking alone (row ids and scores, from the text index that
 * LanceDB's index cache holds) and reads everything else from memory: no request per row.
 *
 * A version's rows are read once, in the background, by one scan (a few large reads); each column is one UTF-8 buffer
 * with its rows' offsets, looked up by LanceDB's row id (ascending in a scan, so found by binary search). A version
 * whose columns would take more than the budget is not kept, and its searches read the store as before.
 */

/** The columns kept: everything a natural search reads of its ranked rows and its page. */
export const ROW_COLUMNS = ['rid', 'src', 'head', 'text', 'pk', 'fields'] as const;
export type RowColumn = (typeof ROW_COLUMNS)[number];

/** One column's strings: their UTF-8 bytes back to back, offsets[i]..offsets[i + 1]; null rows flagged. */
interface StringColumn {
  bytes: Buffer;
  offsets: Float64Array;
  nulls: Uint8Array;
}

/** The kept columns of one version of a space. */
export class VersionRows {
  constructor(
    readonly version: number,
    private readonly rowIds: BigUint64Array,
    private readonly columns: Record<RowColumn, StringColumn>,
    /** Bytes held: the columns' text and their offsets and row ids. */
    readonly bytes: number,
  ) {}

  get rows(): number {
    return this.rowIds.length;
  }

  /** The position of a row, or -1 when this version does not hold it (a row written since). */
  indexOf(rowId: bigint): number {
    let lo = 0;
    let hi = this.rowIds.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const found = this.rowIds[mid]!;
      if (found === rowId) return mid;
      if (found < rowId) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  value(column: RowColumn, at: number): string | null {
    const { bytes, offsets, nulls } = this.columns[column];
    if (nulls[at]) return null;
    return bytes.toString('utf8', offsets[at], offsets[at + 1]);
  }
}

/** Gathers a version's columns batch by batch; `bytes` so far, to give up past the budget. */
export class VersionRowsBuilder {
  private readonly ids: bigint[] = [];
  private readonly parts = new Map<RowColumn, { chunks: Buffer[]; lengths: number[]; nulls: number[] }>(
    ROW_COLUMNS.map((c) => [c, { chunks: [], lengths: [], nulls: [] }]),
  );
  bytes = 0;

  /** One scanned batch: its `_rowid` column and the kept columns (a column the table lacks is null). */
  add(rowIds: ArrayLike<bigint>, columns: Partial<Record<RowColumn, ArrayLike<string | null> | null>>, count: number): void {
    for (let i = 0; i < count; i++) this.ids.push(BigInt(rowIds[i]!));
    for (const name of ROW_COLUMNS) {
      const part = this.parts.get(name)!;
      const values = columns[name];
      const strings: string[] = [];
      for (let i = 0; i < count; i++) {
        const value = values ? values[i] ?? null : null;
        if (value === null) part.nulls.push(part.lengths.length);
        const text = value ?? '';
        strings.push(text);
        part.lengths.push(Buffer.byteLength(text));
      }
      const chunk = Buffer.from(strings.join(''), 'utf8');
      part.chunks.push(chunk);
      this.bytes += chunk.length + 8;
    }
    this.bytes += 8 * count;
  }

  finish(version: number): VersionRows {
    const count = this.ids.length;
    // A scan gives row ids in ascending order; were it ever otherwise, rows are put in that order here.
    let order: number[] | null = null;
    for (let i = 1; i < count; i++) {
      if (this.ids[i - 1]! >= this.ids[i]!) {
        order = Array.from({ length: count }, (_, k) => k).sort((a, b) => (this.ids[a]! < this.ids[b]! ? -1 : 1));
        break;
      }
    }
    const rowIds = BigUint64Array.from(order ? order.map((k) => this.ids[k]!) : this.ids);
    const columns = {} as Record<RowColumn, StringColumn>;
    for (const name of ROW_COLUMNS) {
      const part = this.parts.get(name)!;
      const joined = Buffer.concat(part.chunks);
      const starts = new Float64Array(count + 1);
      for (let i = 0; i < count; i++) starts[i + 1] = starts[i]! + part.lengths[i]!;
      const nullAt = new Uint8Array(count);
      for (const k of part.nulls) nullAt[k] = 1;
      if (!order) {
        columns[name] = { bytes: joined, offsets: starts, nulls: nullAt };
        continue;
      }
      const bytes = Buffer.allocUnsafe(joined.length);
      const offsets = new Float64Array(count + 1);
      const nulls = new Uint8Array(count);
      order.forEach((k, i) => {
        joined.copy(bytes, offsets[i]!, starts[k]!, starts[k + 1]!);
        offsets[i + 1] = offsets[i]! + (starts[k + 1]! - starts[k]!);
        nulls[i] = nullAt[k]!;
      });
      columns[name] = { bytes, offsets, nulls };
    }
    return new VersionRows(version, rowIds, columns, this.bytes);
  }
}
