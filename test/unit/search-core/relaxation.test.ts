import { describe, expect, it } from 'vitest';
import { parseQuery, type QueryNode } from '../../../src/search-core/boolean-query.js';
import { relaxedReadings } from '../../../src/search-core/relaxation.js';

const natural = (text: string) => parseQuery(text, { grouping: false }).root!;
const term = (word: string, quoted = false): QueryNode => (quoted ? { kind: 'term', word, prefix: false, quoted: true } : { kind: 'term', word, prefix: false });

describe('parseQuery in natural mode: hyphens', () => {
  it('when a hyphen is inside a word, then it is part of the word (its parts as one optional phrase), never an exclusion', () => {
    for (const [text, words] of [['what-you-see', ['what', 'you', 'see']], ['e-mail', ['e', 'mail']], ['x-ray', ['x', 'ray']]] as const) {
      expect(natural(text)).toEqual({ kind: 'phrase', words });
    }
    expect(natural('editors what-you-see')).toEqual({ kind: 'and', children: [term('editors'), { kind: 'phrase', words: ['what', 'you', 'see'] }] });
  });

  it('when a hyphen follows a space, then the word after it stays an exclusion', () => {
    expect(natural('editors -vim')).toEqual({ kind: 'and', children: [term('editors'), { kind: 'not', child: term('vim') }] });
  });
});

describe('relaxedReadings', () => {
  it('when a query has phrases, required words and exclusions, then they are relaxed in order: phrases become words, required words optional, exclusions dropped', () => {
    const readings = relaxedReadings(natural('editors "what you see" -vim what-you-get "wysiwyg"'));
    expect(readings.map((r) => r.root)).toEqual([
      { kind: 'and', children: [term('editors'), term('what', true), term('you', true), term('see', true), term('what'), term('you'), term('get'), term('wysiwyg', true), { kind: 'not', child: term('vim') }] },
      { kind: 'and', children: [term('editors'), term('what'), term('you'), term('see'), term('what'), term('you'), term('get'), term('wysiwyg'), { kind: 'not', child: term('vim') }] },
      { kind: 'and', children: [term('editors'), term('what'), term('you'), term('see'), term('what'), term('you'), term('get'), term('wysiwyg')] },
    ]);
    expect(readings.map((r) => r.relaxed)).toEqual([
      [{ kind: 'phrase', text: 'what you see' }, { kind: 'phrase', text: 'what you get' }],
      [{ kind: 'phrase', text: 'what you see' }, { kind: 'phrase', text: 'what you get' }, { kind: 'required', text: 'what you see' }, { kind: 'required', text: 'wysiwyg' }],
      [{ kind: 'phrase', text: 'what you see' }, { kind: 'phrase', text: 'what you get' }, { kind: 'required', text: 'what you see' }, { kind: 'required', text: 'wysiwyg' }, { kind: 'exclusion', text: 'vim' }],
    ]);
  });

  it('when a step has nothing to relax, then it is skipped, and a query with nothing strict has no looser reading', () => {
    expect(relaxedReadings(natural('editors -vim')).map((r) => r.relaxed)).toEqual([[{ kind: 'exclusion', text: 'vim' }]]);
    expect(relaxedReadings(natural('"wysiwyg" editors')).map((r) => r.relaxed)).toEqual([[{ kind: 'required', text: 'wysiwyg' }]]);
    expect(relaxedReadings(natural('document editors'))).toEqual([]);
  });

  it('when a phrase is an operand of OR, then it becomes its words too; an excluded phrase stays whole until exclusions go', () => {
    const readings = relaxedReadings(natural('x-ray OR scanner -"spare parts"'));
    expect(readings[0]!.root).toEqual({ kind: 'and', children: [{ kind: 'or', children: [term('x'), term('ray'), term('scanner')] }, { kind: 'not', child: { kind: 'phrase', words: ['spare', 'parts'], quoted: true } }] });
    expect(readings[1]!.root).toEqual({ kind: 'or', children: [term('x'), term('ray'), term('scanner')] });
    expect(readings[1]!.relaxed).toEqual([{ kind: 'phrase', text: 'x ray' }, { kind: 'exclusion', text: 'spare parts' }]);
  });
});
