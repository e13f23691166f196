import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rowsTable } from '../../../src/search-index/arrow-rows.js';
import { loadLance } from '../../../src/search-index/lance.js';

const lance = await loadLance();
const { arrow } = lance;

const text = (name: string, nullable = true) => new arrow.Field(name, new arrow.Utf8(), nullable);
const schema = new arrow.Schema([
  text('rid', false),
  text('text'),
  new arrow.Field('f_price', new arrow.Float64(), true),
  new arrow.Field('f_open', new arrow.Bool(), true),
  new arrow.Field('vector', new arrow.FixedSizeList(2, new arrow.Field('item', new arrow.Float32(), true)), true),
  text('vmodel'),
]);

const values = (table: import('apache-arrow').Table, name: string) => {
  const column = table.getChild(name)!;
  return Array.from({ length: column.length }, (_, i) => {
    const value = column.get(i);
    return value !== null && typeof value === 'object' ? [...(value as Iterable<number>)] : value;
  });
};

describe('rows written to the index as Arrow', () => {
  const texts = ['plain', 'Café crème', '日本語のテキスト', 'emoji 🚀 here', '', null, undefined, 'lone \ud800 surrogate'];
  const rows = texts.map((t, i) => ({
    rid: `r${i}`,
    ...(t === undefined ? {} : { text: t }),
    f_price: i % 3 === 0 ? null : i * 1.5,
    f_open: i % 2 === 0,
    vector: i === 1 ? null : [i, -i],
  }));

  it('when rows hold text of every kind, then each value reads back as apache-arrow\'s own builder makes it (a lone surrogate as U+FFFD, null and absent as null)', () => {
    const table = rowsTable(lance, schema, rows);
    expect(table.numRows).toBe(texts.length);
    const generic = arrow.vectorFromArray(rows.map((r) => ('text' in r ? r.text : null)), new arrow.Utf8());
    expect(values(table, 'text')).toEqual([...generic]);
    expect(values(table, 'text')).toEqual(['plain', 'Café crème', '日本語のテキスト', 'emoji 🚀 here', '', null, null, 'lone \ufffd surrogate']);
    expect(values(table, 'rid')).toEqual(texts.map((_, i) => `r${i}`));
    expect(table.getChild('text')!.nullCount).toBe(2);
    expect(table.getChild('rid')!.nullCount).toBe(0);
  });

  it('when rows hold numbers, booleans and vectors, then they are written in the schema\'s types with their nulls', () => {
    const table = rowsTable(lance, schema, rows);
    expect(values(table, 'f_price')).toEqual(rows.map((r) => r.f_price));
    expect(values(table, 'f_open')).toEqual(rows.map((r) => r.f_open));
    expect(values(table, 'vector')).toEqual(rows.map((r) => r.vector));
    expect(String(table.schema.fields.find((f) => f.name === 'vector')!.type)).toBe(String(schema.fields[4]!.type));
  });

  it('when no row has a field, then the field is left out (as LanceDB\'s own conversion leaves it), in the schema\'s order', () => {
    const table = rowsTable(lance, schema, rows);
    expect(table.schema.fields.map((f) => f.name)).toEqual(['rid', 'text', 'f_price', 'f_open', 'vector']);
  });

  const dir = mkdtempSync(join(tmpdir(), 'quarry-arrow-rows-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('when they are appended to a LanceDB table and read back, then every value is as written; an upsert without a column leaves that column as it was', async () => {
    const table = await (await lance.lancedb.connect(dir)).createEmptyTable('rows', schema);
    await table.add(rowsTable(lance, schema, rows));
    const byRid = async () => new Map((await table.query().toArray()).map((row) => [row.rid as string, row]));
    const read = await byRid();
    expect(read.size).toBe(rows.length);
    for (const row of rows) {
      const back = read.get(row.rid)!;
      expect(back.text).toBe(row.text == null ? null : row.text.replace('\ud800', '\ufffd'));
      expect([back.f_price, back.f_open]).toEqual([row.f_price, row.f_open]);
      expect(back.vector === null ? null : [...back.vector]).toEqual(row.vector);
      expect(back.vmodel).toBeNull();
    }
    await table.mergeInsert('rid').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rowsTable(lance, schema, [{ rid: 'r2', text: 'changed' }]));
    const after = (await byRid()).get('r2')!;
    expect([after.text, [...after.vector], after.f_open]).toEqual(['changed', [2, -2], true]);
  });

  it('when a text column is given something else than text, then it is refused rather than written as some string', () => {
    expect(() => rowsTable(lance, schema, [{ rid: 'a', text: 42 }])).toThrow(/column text takes text/);
  });
});
