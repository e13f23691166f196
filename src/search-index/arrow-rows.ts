/**
 * Rows to write, as an Arrow table of the space's own schema, for LanceDB's `add` and `mergeInsert` (both take an
 * Arrow table as well as an array of objects).
 *
 * Given objects, LanceDB converts them itself (`makeArrowTable`), generically: it transposes the rows, and apache-arrow's
 * string builder encodes each value on its own with a TextEncoder. A CPU profile of a 100,000-row first sync put 3.7 s
 * in that conversion, 1.9 s of it in those per-value encodings (about 1 KB of text a row, in four text columns and
 * four hashes). Text columns are therefore laid out here as Arrow lays out any Utf8 column, one buffer of every
 * value's bytes and their offsets, written by Buffer's native UTF-8 encoder (which replaces a lone surrogate with
 * U+FFFD as TextEncoder does), and handed to apache-arrow's `makeData`. Every other column (numbers, booleans,
 * vectors) goes through LanceDB's own conversion, its exported `makeArrowTable` with those fields' schema: it knows
 * how Lance wants a missing vector laid out (apache-arrow's builder leaves a null vector without its values).
 */
import type { Data, Field, Schema, Table, Utf8 } from 'apache-arrow';

type ArrowModule = typeof import('apache-arrow');
type LanceModule = typeof import('@lancedb/lancedb');

/** The values of one text column: null (or absent) for no value. */
function utf8Data(arrow: ArrowModule, type: Utf8, values: unknown[]): Data<Utf8> {
  const length = values.length;
  let bytes = 0;
  let nulls = 0;
  for (const value of values) {
    if (value === null || value === undefined) nulls += 1;
    else bytes += Buffer.byteLength(value as string, 'utf8');
  }
  // Utf8's offsets are 32-bit: a write is cut into batches far below this (WRITE_BATCH_CHARS).
  if (bytes > 0x7fffffff) throw new RangeError(`a text column of ${bytes} bytes does not fit one Arrow batch`);
  const data = Buffer.allocUnsafe(bytes);
  const valueOffsets = new Int32Array(length + 1);
  const nullBitmap = nulls > 0 ? new Uint8Array((length + 7) >> 3) : undefined;
  let at = 0;
  for (let i = 0; i < length; i++) {
    valueOffsets[i] = at;
    const value = values[i];
    if (value === null || value === undefined) continue;
    at += data.write(value as string, at, 'utf8');
    if (nullBitmap) nullBitmap[i >> 3]! |= 1 << (i & 7);
  }
  valueOffsets[length] = at;
  return arrow.makeData({ type, length, nullCount: nulls, nullBitmap, valueOffsets, data });
}

function textData(arrow: ArrowModule, field: Field, rows: ReadonlyArray<Record<string, unknown>>): Data<Utf8> {
  const values = rows.map((row) => row[field.name] ?? null);
  for (const value of values) {
    if (value !== null && typeof value !== 'string') throw new TypeError(`column ${field.name} takes text, not ${typeof value}`);
  }
  return utf8Data(arrow, field.type as Utf8, values);
}

/** The only chunk of a column LanceDB made (it makes one batch of its rows). */
function onlyChunk(table: Table, name: string): Data {
  const chunks = table.getChild(name)?.data ?? [];
  if (chunks.length !== 1) throw new Error(`LanceDB made ${chunks.length} chunks of column ${name}`);
  return chunks[0]!;
}

/**
 * `rows` as one record batch of the fields of `schema` that some row has (a property of the field's name; a row
 * without it has null there). A field no row has is left out, as LanceDB's own conversion leaves it out: an upsert
 * then leaves that column of the rows it replaces as it was, and an append fills it with nulls.
 */
export function rowsTable(lance: { lancedb: LanceModule; arrow: ArrowModule }, schema: Schema, rows: ReadonlyArray<Record<string, unknown>>): Table {
  const { arrow, lancedb } = lance;
  const fields = schema.fields.filter((field) => rows.some((row) => field.name in row));
  const others = fields.filter((field) => !arrow.DataType.isUtf8(field.type));
  const converted = others.length === 0 ? null : lancedb.makeArrowTable(
    rows.map((row) => Object.fromEntries(others.map((field) => [field.name, row[field.name] ?? null]))),
    { schema: new arrow.Schema(others) },
  ) as unknown as Table;
  const children = fields.map((field) => (arrow.DataType.isUtf8(field.type) ? textData(arrow, field, rows) : onlyChunk(converted!, field.name)));
  const struct = arrow.makeData({ type: new arrow.Struct(fields), length: rows.length, nullCount: 0, children });
  return new arrow.Table([new arrow.RecordBatch(new arrow.Schema(fields, schema.metadata), struct)]);
}
