/**
 * The columns a search reads of a space's rows, held in this process for one version of a space.
 *
 * A search's ranking comes from the text index (row ids and scores); each column it brings back with the ranked rows
 * (their ids and headings, the page's stored fields, the text relevance feedback reads) is a read of the table's data
 * of its own. From an object store that is a ranged GET per page of each column, about a millisecond each even on
 * loopback; from a local folder the page cache answers, but LanceDB still plans and schedules a read per column, about
 * a millisecond each (a rare word's ranking alone took 1.2 ms, with the five columns 4.5; docs/benchmarks.md). With
 * the version's rows here, a search asks the index for its ranking alone and reads everything else from memory.
 *
 * A version's rows are read once, in the background, by one scan (a few large reads): each batch's columns are kept as
 * Arrow delivered them, their UTF-8 bytes copied once and never decoded (a string is made only for a row a search
 * reads), and rows are looked up by LanceDB's row id (ascending in a scan, so found by binary search). Nothing is
 * joined at the end: no step of the reading holds the event loop for long. A version whose columns would take more
 * than the budget is not kept, and its searches read the index as before.
 *
 * A written space moves on to a new version while its rows stay of the version read: they go on serving the rows of
 * a later version's ranking that they hold (a row id names the same row in every version that holds it), and only the
 * rows written since are read from the index, until the new version's rows are read (index-store.ts, hitsFromMemory).
 */

import type { RowWordsTable } from './row-words.js';
import type { TextPostings } from './postings.js';

/** The columns kept: everything a natural search reads of its ranked rows and its page. */
export const ROW_COLUMNS = ['rid', 'src', 'head', 'text', 'pk', 'fields'] as const;
export type RowColumn = (typeof ROW_COLUMNS)[number];

/**
 * One column of a scanned batch as Arrow holds it (a Utf8 column's data): the rows' UTF-8 bytes back to back in
 * `values`, row i from valueOffsets[offset + i] to valueOffsets[offset + i + 1].
 */
export interface Utf8Data {
  values: Uint8Array;
  valueOffsets: Int32Array;
  offset: number;
  length: number;
  nullCount: number;
  getValid(index: number): boolean;
}

/** One column's strings: the batches' bytes, and each row's batch, start and length in it; null rows flagged. */
interface StringColumn {
  chunks: Buffer[];
  chunkOf: Uint32Array;
  starts: Int32Array;
  lengths: Int32Array;
  nulls: Uint8Array;
}

/** Bytes a row takes in a column beside its text: its batch, start and length, and its null flag. */
const ROW_OVERHEAD = 13;
/** Bytes a row's entry in the places by rid takes, about: the rid's string and the map's entry. */
const RID_PLACE_BYTES = 96;
/** Rows given their place by rid between two yields to other work. */
const PLACES_SLICE_ROWS = 10_000;

/** Each row's place by its rid (in the background: other work runs between slices). */
export async function placesByRid(rows: VersionRows): Promise<Map<string, number>> {
  const places = new Map<string, number>();
  for (let at = 0; at < rows.rows; at++) {
    places.set(rows.value('rid', at) ?? '', at);
    if (at % PLACES_SLICE_ROWS === PLACES_SLICE_ROWS - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  return places;
}

/** The kept columns of one version of a space, and each row's words once counted (row-words.ts). */
export class VersionRows {
  /** Each row's words as relevance feedback reads them, once counted (after the rows are read); null until then. */
  words: RowWordsTable | null = null;
  /** The rows' text as an inverted index (postings.ts), once built from the words; null until then, or never. */
  postings: TextPostings | null = null;
  /**
   * Each row's place by its rid, once the postings are built (placesByRid): what masks the rows written since the
   * version out of its postings (written-rows.ts). Null until then.
   */
  ridPlaces: Map<string, number> | null = null;

  constructor(
    readonly version: number,
    /** The rows' ids, ascending. */
    private readonly rowIds: BigUint64Array,
    /** The row read at each of those places, when the scan gave them in another order (else the same place). */
    private readonly readAt: Uint32Array | null,
    private readonly columns: Record<RowColumn, StringColumn>,
    /** Bytes of the columns' text, what locates each row's, and the row ids. */
    private readonly columnBytes: number,
  ) {}

  /** Bytes held: the columns, and the rows' words, postings and places by rid once counted. */
  get bytes(): number {
    return this.columnBytes + (this.words?.bytes ?? 0) + (this.postings?.bytes ?? 0) + (this.ridPlaces?.size ?? 0) * RID_PLACE_BYTES;
  }

  get rows(): number {
    return this.rowIds.length;
  }

  /** The place of a row, or -1 when this version does not hold it (a row written since). */
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

  /**
   * The primary key and stored fields of the row at `at`, each decoded when first read: a search carries them with
   * every row it ranks (101 for a page of 10), and only the page's rows are ever read.
   */
  rowAt(at: number): { readonly pk: string; readonly fields: string } {
    const read = (column: 'pk' | 'fields') => this.value(column, at) ?? '{}';
    let pk: string | undefined;
    let fields: string | undefined;
    // Getters of the object itself: spread, compared or serialised, it reads as the plain object it stands for.
    return {
      get pk() {
        return (pk ??= read('pk'));
      },
      get fields() {
        return (fields ??= read('fields'));
      },
    };
  }

  value(column: RowColumn, at: number): string | null {
    const row = this.readAt ? this.readAt[at]! : at;
    const { chunks, chunkOf, starts, lengths, nulls } = this.columns[column];
    if (nulls[row]) return null;
    const start = starts[row]!;
    return chunks[chunkOf[row]!]!.toString('utf8', start, start + lengths[row]!);
  }
}

/** Gathers a version's columns batch by batch; `bytes` so far, to give up past the budget. */
export class VersionRowsBuilder {
  private readonly ids: bigint[] = [];
  private readonly parts = new Map<RowColumn, { chunks: Buffer[]; chunkOf: number[]; starts: number[]; lengths: number[]; nulls: number[] }>(
    ROW_COLUMNS.map((c) => [c, { chunks: [], chunkOf: [], starts: [], lengths: [], nulls: [] }]),
  );
  bytes = 0;

  /** One scanned batch: its `_rowid` column and the kept columns' data (a column the table lacks is null). */
  addBatch(rowIds: ArrayLike<bigint>, columns: Partial<Record<RowColumn, Utf8Data[] | null>>, count: number): void {
    for (let i = 0; i < count; i++) this.ids.push(BigInt(rowIds[i]!));
    for (const name of ROW_COLUMNS) {
      const part = this.parts.get(name)!;
      const chunks = columns[name];
      if (!chunks) {
        for (let i = 0; i < count; i++) {
          part.nulls.push(part.lengths.length);
          part.chunkOf.push(0);
          part.starts.push(0);
          part.lengths.push(0);
        }
        continue;
      }
      for (const data of chunks) {
        const { values, valueOffsets, offset, length } = data;
        const first = valueOffsets[offset]!;
        // A copy: the batch's memory goes once it is read.
        const chunk = Buffer.from(values.subarray(first, valueOffsets[offset + length]!));
        const at = part.chunks.push(chunk) - 1;
        for (let i = 0; i < length; i++) {
          if (data.nullCount > 0 && !data.getValid(i)) part.nulls.push(part.lengths.length);
          part.chunkOf.push(at);
          part.starts.push(valueOffsets[offset + i]! - first);
          part.lengths.push(valueOffsets[offset + i + 1]! - valueOffsets[offset + i]!);
        }
        this.bytes += chunk.length + ROW_OVERHEAD * length;
      }
    }
    this.bytes += 8 * count;
  }

  finish(version: number): VersionRows {
    const count = this.ids.length;
    // A scan gives row ids in ascending order; were it ever otherwise, each place says which row was read there.
    let readAt: Uint32Array | null = null;
    for (let i = 1; i < count; i++) {
      if (this.ids[i - 1]! >= this.ids[i]!) {
        readAt = Uint32Array.from({ length: count }, (_, k) => k).sort((a, b) => (this.ids[a]! < this.ids[b]! ? -1 : 1));
        break;
      }
    }
    const rowIds = readAt ? BigUint64Array.from(readAt, (k) => this.ids[k]!) : BigUint64Array.from(this.ids);
    const columns = {} as Record<RowColumn, StringColumn>;
    for (const name of ROW_COLUMNS) {
      const part = this.parts.get(name)!;
      const nulls = new Uint8Array(count);
      for (const k of part.nulls) nulls[k] = 1;
      columns[name] = { chunks: part.chunks, chunkOf: Uint32Array.from(part.chunkOf), starts: Int32Array.from(part.starts), lengths: Int32Array.from(part.lengths), nulls };
    }
    return new VersionRows(version, rowIds, readAt, columns, this.bytes);
  }
}
