import { describe, expect, it } from 'vitest';
import { DIALECTS, type Engine, type TableSchema } from '../../../src/connectors/index.js';
import { addText, completions, didYouMean, editDistance, mergeVocabularies, sampleQuery, type Vocabulary } from '../../../src/sql-search/vocabulary.js';

const vocabulary = (): Vocabulary => {
  const v: Vocabulary = new Map();
  addText(v, 'Wireless headphones with a battery. Headphones, headsets and more headphones. Battle of the bands.');
  return v;
};

describe('did you mean', () => {
  it.each([
    ['kitten', 'sitting', 3], ['hedphones', 'headphones', 1], ['baterry', 'battery', 2], ['abc', 'abc', 0], ['wrieless', 'wireless', 1],
  ])('when the distance of %s and %s is measured, then it is %i (a swap counts once)', (a, b, d) => {
    expect(editDistance(a, b, 5)).toBe(d);
  });

  it('when words are too far apart, then the measure stops early above the bound', () => {
    expect(editDistance('abcdef', 'uvwxyz', 2)).toBe(3);
  });

  it('when words of the query are unknown, then they are replaced by the most frequent close word, keeping the rest', () => {
    expect(didYouMean('Wireles HEDPHONES!', vocabulary())).toEqual(['wireless headphones!']);
    expect(didYouMean('baterry', vocabulary())[0]).toBe('battery');
  });

  it('when every word is known or nothing is close, then there is nothing to suggest', () => {
    expect(didYouMean('wireless headphones', vocabulary())).toEqual([]);
    expect(didYouMean('xylophone', vocabulary())).toEqual([]);
    expect(didYouMean('anything', new Map())).toEqual([]);
  });

  it('when vocabularies of several connections merge, then counts add up', () => {
    const merged = mergeVocabularies([vocabulary(), vocabulary()]);
    expect(merged.get('headphones')).toBe(6);
  });
});

describe('sampling a table', () => {
  const notes = (engine: Engine): TableSchema => ({
    name: 'notes', schema: engine === 'postgres' ? 'app' : null, primaryKey: ['id'], rowEstimate: 0, fullTextIndexes: [], textColumns: ['title', 'body'],
    columns: [
      { name: 'id', type: engine === 'mysql' ? 'int(11)' : 'integer', searchable: false },
      { name: 'title', type: engine === 'mysql' ? 'varchar(200)' : engine === 'postgres' ? 'character varying(200)' : 'TEXT', searchable: true },
      { name: 'body', type: engine === 'mysql' ? 'longtext' : engine === 'postgres' ? 'text' : 'TEXT', searchable: true },
    ],
  });

  it.each([
    ['sqlite', `SELECT CASE WHEN typeof("title") IN ('text', 'blob') THEN substr("title", 1, 2000) ELSE "title" END AS "title", CASE WHEN typeof("body") IN ('text', 'blob') THEN substr("body", 1, 2000) ELSE "body" END AS "body" FROM "notes" LIMIT 500`],
    ['mysql', 'SELECT LEFT(`title`, 2000) AS `title`, LEFT(`body`, 2000) AS `body` FROM `notes` LIMIT 500'],
    ['postgres', 'SELECT left("title"::text, 2000) AS "title", left("body"::text, 2000) AS "body" FROM "app"."notes" LIMIT 500'],
  ] as const)('when %s text is sampled for suggestions, then each value is cut to the characters read, in SQL', (engine, sql) => {
    expect(sampleQuery({ engine, ...DIALECTS[engine] }, notes(engine))).toBe(sql);
  });
});

describe('completions', () => {
  const vocabulary = new Map([['keyboard', 3], ['keys', 5], ['key', 9], ['kettle', 1]]);

  it('when the last word starts longer words, then they complete it, most frequent first, the rest of the text kept', () => {
    expect(completions('Mechanical ke', vocabulary, 5)).toEqual([
      { text: 'Mechanical key', count: 9 },
      { text: 'Mechanical keys', count: 5 },
      { text: 'Mechanical keyboard', count: 3 },
      { text: 'Mechanical kettle', count: 1 },
    ]);
  });

  it('when the last word is a whole word, then only longer words complete it', () => {
    expect(completions('key', vocabulary, 5).map((c) => c.text)).toEqual(['keys', 'keyboard']);
  });

  it('when the text ends in a space or the word is one letter, then nothing is completed', () => {
    expect(completions('key ', vocabulary, 5)).toEqual([]);
    expect(completions('k', vocabulary, 5)).toEqual([]);
  });

  it('when a limit is given, then no more than that come back', () => {
    expect(completions('ke', vocabulary, 2)).toHaveLength(2);
  });
});
