import { describe, expect, it } from 'vitest';
import { foldWord } from '../../../src/search-core/stop-words.js';

/** The index's folding spelled out the long way: decompose, drop the marks, lower-case. */
const folded = (word: string) => word.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

describe('foldWord', () => {
  it('when a word is ASCII, then it is lower-cased and nothing else', () => {
    for (const word of ['River', 'HARBOR', 'kvoplourtmet', 'Model3', 'x', '']) expect(foldWord(word)).toBe(word.toLowerCase());
  });

  it('when a word holds accents or compatibility characters, then they fold as the index folds them', () => {
    expect(foldWord('Café')).toBe('cafe');
    expect(foldWord('ÉCOLE')).toBe('ecole');
    expect(foldWord('ﬁle')).toBe('file');
    expect(foldWord('Straße')).toBe('straße');
  });

  it('when any word is folded, then the fast path and the long way agree', () => {
    const words = ['naïve', 'Zürich', 'résumé', 'ÅNGSTRÖM', 'plain', 'MiXeD9', 'ｆｕｌｌ', 'Ωmega', 'coöperate'];
    for (const word of words) expect(foldWord(word)).toBe(folded(word));
  });
});
