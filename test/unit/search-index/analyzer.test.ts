import { describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/search-core/query.js';
import { highlightByStems, indexTextQuery, queryStems } from '../../../src/search-index/analyzer.js';

const natural = (text: string) => indexTextQuery(compileQuery(text, 'natural').query);

describe('queryStems', () => {
  it('when a query has inflected words, then their stems are kept, folded to lower case without accents', () => {
    expect([...queryStems('Running MODELS')].sort()).toEqual(['model', 'run']);
    expect(queryStems('Café')).toEqual(queryStems('cafe'));
  });

  it('when a query has stop words, then they are left out', () => {
    expect([...queryStems('the art of the deal')].sort()).toEqual(['art', 'deal']);
    expect(queryStems('to be or not to be').size).toBe(0);
  });
});

describe('highlightByStems', () => {
  it('when a row has an inflection of a query word, then it is marked and its column is matched', () => {
    const fields = { title: 'Language models', body: 'Small models run anywhere.' };
    const { snippet, matchedColumns } = highlightByStems(fields, ['title', 'body'], queryStems('model'));
    expect(snippet).toBe('Language <mark>models</mark>');
    expect(matchedColumns).toEqual(['title', 'body']);
  });

  it('when words stem to the query\'s by changing their first letters (y, accents, digits), then they are still marked', () => {
    const fields = { body: 'The yellowing skies: lying Yellow 3D café, tying knots.' };
    const { snippet } = highlightByStems(fields, ['body'], queryStems('yellow sky lie 3d cafe tie'));
    expect(snippet).toBe('The <mark>yellowing</mark> <mark>skies</mark>: <mark>lying</mark> <mark>Yellow</mark> <mark>3D</mark> <mark>café</mark>, <mark>tying</mark> knots.');
  });

  it('when the query names a stop word, then that word is never marked, even if asked for', () => {
    const { snippet } = highlightByStems({ body: 'The model of the year' }, ['body'], new Set(['the', 'of', 'model']));
    expect(snippet).toBe('The <mark>model</mark> of the year');
  });

  it('when a matching word sits among markup, then everything else is escaped', () => {
    const { snippet } = highlightByStems({ note: 'Water the <b>orchids</b> & ferns' }, ['note'], queryStems('orchid'));
    expect(snippet).toBe('Water the &lt;b&gt;<mark>orchids</mark>&lt;/b&gt; &amp; ferns');
  });

  it('when only some columns hold a query word, then only those are matched and the snippet comes from the first', () => {
    const fields = { title: 'Kitchen', body: 'Descale the kettle with vinegar', tags: 'home' };
    const { snippet, matchedColumns } = highlightByStems(fields, ['title', 'body', 'tags'], queryStems('kettles'));
    expect(matchedColumns).toEqual(['body']);
    expect(snippet).toBe('Descale the <mark>kettle</mark> with vinegar');
  });

  it('when the first match is deep in a text, in capitals or inside a run of accents and dashes, then the snippet starts just before it', () => {
    const lead = 'plain words before it '.repeat(20);
    const cases: Array<[string, string]> = [
      [`${lead}the MODELS here`, '&hellip; words before it plain words before it plain words before it the <mark>MODELS</mark> here'],
      [`${lead}a naïve—model here`, '&hellip; before it plain words before it plain words before it a naïve—<mark>model</mark> here'],
      [`${lead}Modèles—models`, '&hellip; words before it plain words before it plain words before it <mark>Modèles</mark>—<mark>models</mark>'],
    ];
    for (const [body, snippet] of cases) {
      expect(highlightByStems({ title: 'Other', body }, ['title', 'body'], queryStems('model')), body).toEqual({ snippet, matchedColumns: ['body'] });
    }
  });

  it('when several columns match, then the snippet comes from the one with the most query words, the first on a tie', () => {
    const fields = { name: 'Quiet headphones', description: 'Noise cancelling headphones for long flights' };
    const { snippet, matchedColumns } = highlightByStems(fields, ['name', 'description'], queryStems('headphones for a flight'));
    expect(matchedColumns).toEqual(['name', 'description']);
    expect(snippet).toBe('Noise cancelling <mark>headphones</mark> for long <mark>flights</mark>');
    expect(highlightByStems(fields, ['name', 'description'], queryStems('headphones')).snippet).toBe('Quiet <mark>headphones</mark>');
  });

  it('when no word matches (a row found by meaning), then the snippet is the start of its text and the matched columns are the text columns with text', () => {
    const fields = { title: '', body: 'Sleep well <tonight>', note: null, tags: 'rest' };
    const { snippet, matchedColumns } = highlightByStems(fields, ['title', 'body', 'note', 'tags'], queryStems('insomnia'));
    expect(matchedColumns).toEqual(['body', 'tags']);
    expect(snippet).toBe('Sleep well &lt;tonight&gt;');
  });

  it('when a row has no text at all, then the snippet is empty and no column is matched', () => {
    expect(highlightByStems({ title: null }, ['title'], queryStems('x'))).toEqual({ snippet: '', matchedColumns: [] });
  });
});

describe('indexTextQuery', () => {
  it('when a query has words and a phrase, then every word ranks and a row must hold each word of the phrase', () => {
    expect(natural('wireless "noise cancelling" headphones')).toEqual({ words: 'wireless headphones noise cancelling', require: ['noise', 'cancelling'], exclude: [] });
  });

  it('when a query excludes a word or a phrase, then those words keep rows out and do not rank', () => {
    expect(natural('headphones -wired -"ear buds"')).toEqual({ words: 'headphones', require: [], exclude: ['wired', 'ear', 'buds'] });
  });

  it('when a query uses OR, then both sides rank', () => {
    expect(natural('tea OR coffee')).toEqual({ words: 'tea coffee', require: [], exclude: [] });
  });

  it('when the query has no word, then there is nothing to rank or exclude', () => {
    expect(indexTextQuery({ root: null, anyWord: null })).toEqual({ words: '', require: [], exclude: [] });
  });
});
