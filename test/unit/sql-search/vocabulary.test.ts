import { describe, expect, it } from 'vitest';
import { addText, didYouMean, editDistance, mergeVocabularies, type Vocabulary } from '../../../src/sql-search/vocabulary.js';

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
