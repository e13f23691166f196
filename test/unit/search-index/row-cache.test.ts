import { describe, expect, it } from 'vitest';
import { ROW_COLUMNS, type RowColumn, type Utf8Data, VersionRowsBuilder } from '../../../src/search-index/row-cache.js';

/** Strings as an Arrow Utf8 column holds them (null: no value), `offset` rows into a longer buffer as a slice is. */
function utf8(values: Array<string | null>, offset = 0): Utf8Data[] {
  const all = [...Array.from({ length: offset }, () => 'before'), ...values];
  const encoded = all.map((v) => Buffer.from(v ?? '', 'utf8'));
  const valueOffsets = new Int32Array(all.length + 1);
  encoded.forEach((bytes, i) => (valueOffsets[i + 1] = valueOffsets[i]! + bytes.length));
  const nullCount = values.filter((v) => v === null).length;
  return [{ values: Buffer.concat(encoded), valueOffsets, offset, length: values.length, nullCount, getValid: (i) => values[i] !== null }];
}

const batch = (columns: Partial<Record<RowColumn, Array<string | null> | null>>, offset = 0) =>
  Object.fromEntries(ROW_COLUMNS.map((name) => [name, columns[name] ? utf8(columns[name]!, offset) : null]));

describe('a version\'s rows in memory', () => {
  it('when batches are added, then each row is found by its row id with its columns, nulls and non-ASCII text kept, a sliced batch read from its offset', () => {
    const builder = new VersionRowsBuilder();
    builder.addBatch(BigUint64Array.from([1n, 2n]), batch({ rid: ['a', 'b'], src: ['s1', 's1'], head: [null, 'Café'], text: ['one', 'zwei ü'], pk: ['{"id":1}', '{"id":2}'], fields: ['{}', '{"x":"é"}'] }), 2);
    builder.addBatch(BigUint64Array.from([(5n << 32n) + 7n]), batch({ rid: ['c'], src: ['s2'], head: ['h'], text: [null], pk: ['{"id":3}'], fields: null }, 3), 1);
    const rows = builder.finish(4);
    expect(rows.version).toBe(4);
    expect(rows.rows).toBe(3);
    expect(rows.indexOf(3n)).toBe(-1);
    const at = rows.indexOf(2n);
    expect([rows.value('rid', at), rows.value('head', at), rows.value('text', at), rows.value('fields', at)]).toEqual(['b', 'Café', 'zwei ü', '{"x":"é"}']);
    expect(rows.value('head', rows.indexOf(1n))).toBeNull();
    const last = rows.indexOf((5n << 32n) + 7n);
    expect([rows.value('rid', last), rows.value('text', last), rows.value('fields', last)]).toEqual(['c', null, null]);
  });

  it('when row ids come out of order, then they are put in order with their columns', () => {
    const builder = new VersionRowsBuilder();
    builder.addBatch(BigUint64Array.from([9n, 3n, 6n]), batch({ rid: ['nine', 'three', 'six'], text: ['9', '3', '6'] }), 3);
    const rows = builder.finish(1);
    for (const [id, rid, text] of [[3n, 'three', '3'], [6n, 'six', '6'], [9n, 'nine', '9']] as const) {
      expect([rows.value('rid', rows.indexOf(id)), rows.value('text', rows.indexOf(id))]).toEqual([rid, text]);
    }
    expect(rows.bytes).toBeGreaterThan(0);
  });

  it('when a row is carried with its stored fields, then they are decoded only when read, and once', () => {
    const builder = new VersionRowsBuilder();
    builder.addBatch(BigUint64Array.from([1n, 2n]), batch({ rid: ['a', 'b'], pk: ['{"id":1}', null], fields: ['{"x":"é"}', null] }), 2);
    const rows = builder.finish(1);
    const decoded: Array<[RowColumn, number]> = [];
    const value = rows.value.bind(rows);
    rows.value = (column, at) => (decoded.push([column, at]), value(column, at));
    const [first, second] = [rows.rowAt(rows.indexOf(1n)), rows.rowAt(rows.indexOf(2n))];
    expect(decoded).toEqual([]);
    expect([first.pk, first.fields, first.pk]).toEqual(['{"id":1}', '{"x":"é"}', '{"id":1}']);
    expect(decoded).toEqual([['pk', 0], ['fields', 0]]);
    // A row without them reads as empty objects, as a row read from the index does.
    expect([second.fields, second.pk]).toEqual(['{}', '{}']);
  });
});
