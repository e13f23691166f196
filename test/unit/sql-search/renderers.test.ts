import { describe, expect, it } from 'vitest';
import { parseQuery, type QueryNode } from '../../../src/search-core/boolean-query.js';
import { anyTermTsquery, fts5ColumnFilter, toFts5, toMysqlBoolean, toTsquery } from '../../../src/sql-search/renderers.js';

const root = (text: string) => parseQuery(text, { grouping: true }).root!;
const hostileTree: QueryNode = {
  kind: 'and',
  children: [
    { kind: 'term', word: "x' | 'y", prefix: false },
    { kind: 'phrase', words: ['a"b', 'c\\'] },
    { kind: 'not', child: { kind: 'term', word: ':*<->!', prefix: true } },
  ],
};

describe('toTsquery', () => {
  it('when the query has every operator, then each maps to its tsquery operator with quoted lexemes', () => {
    expect(toTsquery(root('+wireless -wired "noise cancelling" (ear* OR head*)'))).toBe(
      "('wireless') & (('noise' <-> 'cancelling')) & (('ear':*) | ('head':*)) & (!('wired'))",
    );
  });

  it('when a tree carries tsquery syntax in its words, then the words are cleaned again', () => {
    const text = toTsquery(hostileTree);
    expect(text).toBe("('xy') & (('ab' <-> 'c'))");
    expect(text).not.toMatch(/:\*|<->.*!|\\/);
  });

  it('when "any term" is asked, then the positive words are ORed', () => {
    expect(anyTermTsquery([{ word: 'a', prefix: false }, { word: 'b', prefix: true }])).toBe("'a' | 'b':*");
  });
});

describe('toMysqlBoolean', () => {
  it('when the query has every operator, then each maps to BOOLEAN MODE syntax', () => {
    expect(toMysqlBoolean(root('+wireless -wired "noise cancelling" (ear* OR head*)'))).toBe('+wireless +"noise cancelling" +(ear* head*) -wired');
  });

  it('when a required word is an InnoDB stopword or too short, then it is left out instead of matching nothing', () => {
    expect(toMysqlBoolean(root('the ox battery'))).toBe('+battery');
    expect(toMysqlBoolean(root('the -battery'))).toBe('');
  });

  it('when a tree carries operators in its words, then they are removed', () => {
    expect(toMysqlBoolean(hostileTree)).toBe('+"ab c"');
    expect(toMysqlBoolean(root('a@b ~c >d <e'))).not.toMatch(/[@~<>]/);
  });
});

describe('toFts5', () => {
  it('when the query has every operator, then each maps to FTS5 syntax with every word quoted', () => {
    expect(toFts5(root('+wireless -wired "noise cancelling" (ear* OR head*)'))).toBe(
      '(("wireless") AND ("noise cancelling") AND (("ear" *) OR ("head" *))) NOT ("wired")',
    );
  });

  it('when a tree carries quotes, then no string is left open', () => {
    const text = toFts5(hostileTree);
    expect(text).toBe('("xy") AND ("ab c")');
    expect((text.match(/"/g) ?? []).length % 2).toBe(0);
  });

  it('when columns are filtered, then their names are FTS5 strings', () => {
    expect(fts5ColumnFilter(['title', 'we"ird'], '"a"')).toBe('{"title" "we""ird"} : ("a")');
  });
});
