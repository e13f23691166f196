import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../../src/http/json-body.js';

const nested = (levels: number) => '{"a":'.repeat(levels - 1) + '[1]' + '}'.repeat(levels - 1);

describe('nestsDeeperThan', () => {
  it('when JSON nests exactly to the limit, then it passes; one level more, then it is too deep', () => {
    expect(JSON.parse(nested(MAX_JSON_DEPTH))).toBeTypeOf('object');
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
  });

  it('when brackets sit inside strings, escaped quotes included, then they do not count', () => {
    const text = JSON.stringify({ a: '[[[[{{{{', b: 'say \\"[[[[\\" ' + '['.repeat(100), c: ['x'] });
    expect(nestsDeeperThan(text, 2)).toBe(false);
    expect(nestsDeeperThan(text, 1)).toBe(true);
  });

  it('when siblings follow each other, then depth is the deepest branch, not their sum', () => {
    const text = JSON.stringify({ a: [[1]], b: [[2]], c: [[3]] });
    expect(nestsDeeperThan(text, 3)).toBe(false);
    expect(nestsDeeperThan(text, 2)).toBe(true);
  });

  it('when a body nests a million levels, then the scan answers without running out of stack', () => {
    expect(nestsDeeperThan('['.repeat(1_000_000) + ']'.repeat(1_000_000), MAX_JSON_DEPTH)).toBe(true);
  });
});
