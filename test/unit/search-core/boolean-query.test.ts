import { describe, expect, it } from 'vitest';
import { anyWordQuery, MAX_QUERY_WORDS, parseQuery, positiveTerms, type QueryNode } from '../../../src/search-core/boolean-query.js';

const boolean = (text: string) => parseQuery(text, { grouping: true });
const term = (word: string, prefix = false): QueryNode => ({ kind: 'term', word, prefix });

/** Every word in the tree, to prove nothing but letters and digits survives. */
function words(node: QueryNode | null): string[] {
  if (!node) return [];
  if (node.kind === 'term') return [node.word];
  if (node.kind === 'phrase') return node.words;
  if (node.kind === 'not') return words(node.child);
  return node.children.flatMap(words);
}

describe('parseQuery', () => {
  it('when words are bare or marked +, then they are all required', () => {
    expect(boolean('wireless +headphones').root).toEqual({ kind: 'and', children: [term('wireless'), term('headphones')] });
  });

  it('when a word is marked - or NOT, then it is excluded', () => {
    expect(boolean('headphones -wired NOT cheap').root).toEqual({
      kind: 'and', children: [term('headphones'), { kind: 'not', child: term('wired') }, { kind: 'not', child: term('cheap') }],
    });
  });

  it('when words are quoted, then they form a phrase marked quoted, and a phrase can be excluded', () => {
    expect(boolean('"noise cancelling" -"wired in" "single"').root).toEqual({
      kind: 'and',
      children: [
        { kind: 'phrase', words: ['noise', 'cancelling'], quoted: true },
        { kind: 'term', word: 'single', prefix: false, quoted: true },
        { kind: 'not', child: { kind: 'phrase', words: ['wired', 'in'], quoted: true } },
      ],
    });
  });

  it('when OR joins words, then it binds tighter than the implicit AND', () => {
    expect(boolean('a b OR c | d').root).toEqual({ kind: 'and', children: [term('a'), { kind: 'or', children: [term('b'), term('c'), term('d')] }] });
  });

  it('when parentheses group, then the group is one operand, and can be excluded', () => {
    expect(boolean('(a OR b) -(c d)').root).toEqual({
      kind: 'and',
      children: [{ kind: 'or', children: [term('a'), term('b')] }, { kind: 'not', child: { kind: 'and', children: [term('c'), term('d')] } }],
    });
  });

  it('when a word ends in *, then it is a prefix; tsquery :* is read the same', () => {
    expect(boolean('head* wire:*').root).toEqual({ kind: 'and', children: [term('head', true), term('wire', true)] });
  });

  it('when natural mode sees parentheses, then they only separate words', () => {
    expect(parseQuery('(a OR b) c', { grouping: false }).root).toEqual({ kind: 'and', children: [{ kind: 'or', children: [term('a'), term('b')] }, term('c')] });
  });

  it('when a token joins words with punctuation, then it is a phrase of those words', () => {
    expect(boolean('e-mail').root).toEqual({ kind: 'phrase', words: ['e', 'mail'] });
  });

  it.each([
    ["'; DROP TABLE users; --", ['DROP', 'TABLE', 'users']],
    ['a:* <-> !b & c | d', ['a', 'b', 'c', 'd']],
    ['\\\' \\" \\\\', []],
    ['"unbalanced phrase', ['unbalanced', 'phrase']],
    ['((a) b', ['a', 'b']],
    ['a)) OR OR b ((', ['a', 'b']],
    ['`x` {y}: z^2 $1 %_%', ['x', 'y', 'z', '2', '1']],
  ])('when the input is hostile (%s), then only words of letters and digits remain', (input, expected) => {
    const found = words(boolean(input).root);
    expect(found).toEqual(expected);
    for (const word of found) expect(word).toMatch(/^[\p{L}\p{M}\p{N}]+$/u);
  });

  it('when an OR has an excluded operand, then that operand is dropped', () => {
    expect(boolean('a OR -b').root).toEqual(term('a'));
  });

  it('when every word is excluded, then there is no query and excludedOnly says why', () => {
    expect(boolean('-a -"b c"')).toEqual({ root: null, excludedOnly: true });
    expect(boolean('!!! <->')).toEqual({ root: null, excludedOnly: false });
  });

  it('when the input is very long or deeply nested, then parsing stays bounded', () => {
    const many = boolean('w '.repeat(400));
    expect(words(many.root)).toHaveLength(MAX_QUERY_WORDS);
    const deep = boolean(`${'('.repeat(200)}a OR b${')'.repeat(200)} c`);
    expect(words(deep.root)).toEqual(['a', 'b', 'c']);
  });

  it('when positive terms are listed, then excluded words are not among them', () => {
    expect(positiveTerms(boolean('a "b c" -d (e OR f*)').root)).toEqual([
      { word: 'a', prefix: false }, { word: 'b', prefix: false }, { word: 'c', prefix: false }, { word: 'e', prefix: false }, { word: 'f', prefix: true },
    ]);
  });
});

describe('anyWordQuery', () => {
  const natural = (text: string) => anyWordQuery(parseQuery(text, { grouping: false }).root!);
  const phrase = (...words: string[]): QueryNode => ({ kind: 'phrase', words, quoted: true });

  it('when the query is plain words, then a row needs any of them and is ranked by all', () => {
    const query = natural('wireless noise headphones');
    const either: QueryNode = { kind: 'or', children: [term('wireless'), term('noise'), term('headphones')] };
    expect(query).toEqual({ match: either, rank: either, items: either.children, required: [], excluded: [] });
  });

  it('when words are quoted or excluded, then the quoted ones are required, the excluded ones ruled out, and the rest only rank', () => {
    const query = natural('"noise cancelling" headphones -wired');
    expect(query.match).toEqual({ kind: 'and', children: [phrase('noise', 'cancelling'), { kind: 'not', child: term('wired') }] });
    expect(query.rank).toEqual({ kind: 'or', children: [term('headphones'), phrase('noise', 'cancelling')] });
    expect(query.items).toEqual([term('headphones'), phrase('noise', 'cancelling')]);
    expect(query).toMatchObject({ required: [phrase('noise', 'cancelling')], excluded: [term('wired')] });
  });

  it('when words are excluded but none is quoted, then a row still needs one of the other words', () => {
    expect(natural('headphones cable -wired').match).toEqual({
      kind: 'and', children: [{ kind: 'or', children: [term('headphones'), term('cable')] }, { kind: 'not', child: term('wired') }],
    });
  });

  it('when words are joined by punctuation or OR, or repeated, then they are optional items like any other, each once', () => {
    const query = natural('e-mail x OR b Year year');
    expect(query.items).toEqual([{ kind: 'phrase', words: ['e', 'mail'] }, term('x'), term('b'), term('Year')]);
    expect(query.required).toEqual([]);
  });

  it('when the query holds stop words, then they are left out, unless they are all it has or are quoted', () => {
    expect(natural('headphones for a flight').items).toEqual([term('headphones'), term('flight')]);
    expect(natural('to be or not').items).toEqual([term('to'), term('be'), term('or'), term('not')]);
    const quoted = natural('"the" band');
    expect(quoted.items).toEqual([term('band'), { ...term('the'), quoted: true }]);
    expect(quoted.required).toEqual([{ ...term('the'), quoted: true }]);
  });

  it('when the query is one word, then that word is the whole condition', () => {
    expect(natural('battery')).toEqual({ match: term('battery'), rank: term('battery'), items: [term('battery')], required: [], excluded: [] });
  });
});
