import { describe, expect, it } from 'vitest';
import { escapeHtml, highlightRow, MARK_START, MARK_STOP, markersToHtml } from '../../../src/search-core/highlight.js';

describe('snippets', () => {
  it('when engine output has markers, then everything else is escaped and the markers become <mark>', () => {
    const text = `a <script>&"' ${MARK_START}match${MARK_STOP} b ${MARK_START}open`;
    expect(markersToHtml(text)).toBe('a &lt;script&gt;&amp;&quot;&#39; <mark>match</mark> b <mark>open</mark>');
  });

  it('when stop markers stray, then no tag is left unbalanced', () => {
    expect(markersToHtml(`${MARK_STOP}x${MARK_START}${MARK_START}y${MARK_STOP}${MARK_STOP}`)).toBe('x<mark>y</mark>');
  });

  it('when a row is highlighted by words, then whole words and prefixes are marked, in the first matching column', () => {
    const fields = { title: 'Keyboard', body: 'A tactile <keyboard> with keys & keycaps; keyboards too.' };
    const { snippet, matchedColumns } = highlightRow(fields, ['title', 'body'], [{ word: 'key', prefix: true }], 'word');
    expect(matchedColumns).toEqual(['title', 'body']);
    expect(snippet).toBe('<mark>Keyboard</mark>');
    const body = highlightRow(fields, ['body'], [{ word: 'keys', prefix: false }], 'word');
    expect(body.snippet).toBe('A tactile &lt;keyboard&gt; with <mark>keys</mark> &amp; keycaps; keyboards too.');
  });

  it('when several columns match, then the snippet comes from the one with the most query words, the first on a tie', () => {
    const fields = { name: 'Quiet headphones', description: 'Noise cancelling headphones for long flights' };
    const terms = [{ word: 'headphones', prefix: false }, { word: 'flight', prefix: true }];
    const { snippet, matchedColumns } = highlightRow(fields, ['name', 'description'], terms, 'word');
    expect(matchedColumns).toEqual(['name', 'description']);
    expect(snippet).toBe('Noise cancelling <mark>headphones</mark> for long <mark>flights</mark>');
    expect(highlightRow(fields, ['name', 'description'], terms.slice(0, 1), 'word').snippet).toBe('Quiet <mark>headphones</mark>');
  });

  it('when a row is highlighted by substrings, then a match inside a word is marked', () => {
    const { snippet } = highlightRow({ note: 'concatenate' }, ['note'], [{ word: 'cat', prefix: false }], 'substring');
    expect(snippet).toBe('con<mark>cat</mark>enate');
  });

  it('when the match is deep in a long text, then the snippet is a window around it', () => {
    const text = `${'lorem ipsum '.repeat(100)}needle ${'dolor sit '.repeat(100)}`;
    const { snippet } = highlightRow({ body: text }, ['body'], [{ word: 'needle', prefix: false }], 'word');
    expect(snippet.startsWith('&hellip; ')).toBe(true);
    expect(snippet.endsWith(' &hellip;')).toBe(true);
    expect(snippet).toContain('<mark>needle</mark>');
    expect(snippet.length).toBeLessThan(300);
  });

  it('when regular expression characters are searched, then they are literal', () => {
    expect(highlightRow({ a: 'a.b a+b' }, ['a'], [{ word: 'a+b', prefix: false }], 'substring').snippet).toBe('a.b <mark>a+b</mark>');
    expect(escapeHtml('<>&"\'')).toBe('&lt;&gt;&amp;&quot;&#39;');
  });

  it('when a snippet of ASCII text is cut, then it stays ASCII (the ellipsis is &hellip;, as is one in the text)', () => {
    const text = `${'lorem ipsum '.repeat(100)}needle\u2026 ${'dolor sit '.repeat(100)}`;
    const { snippet } = highlightRow({ body: text }, ['body'], [{ word: 'needle', prefix: false }], 'word');
    expect(snippet).toContain('<mark>needle</mark>&hellip; dolor');
    expect(/^[\x20-\x7e]*$/.test(snippet)).toBe(true);
    expect(markersToHtml(`a\u2026 ${MARK_START}b${MARK_STOP}`)).toBe('a&hellip; <mark>b</mark>');
  });
});
