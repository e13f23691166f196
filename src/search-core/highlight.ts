/**
 * SearchResult.snippet: HTML-escaped text with the matches in <mark>. Engines that highlight (ts_headline, FTS5
 * snippet) mark matches with random per-process markers that no stored text contains; everything between them is
 * escaped here. Engines without a highlighter (MySQL, the unindexed fallback) are highlighted here from the row.
 */
import { randomBytes } from 'node:crypto';
import type { PositiveTerm } from './boolean-query.js';

const nonce = randomBytes(6).toString('hex');
/** Start and stop markers handed to the engine's highlighter (letters and digits only: ts_headline options allow them unquoted). */
export const MARK_START = `qms${nonce}`;
export const MARK_STOP = `qme${nonce}`;

/**
 * The characters HTML gives meaning to, and the ellipsis that marks a cut (U+2026). The ellipsis is written as an
 * entity so that a snippet of ASCII text stays ASCII: a response made only of ASCII strings is the cheapest for the
 * server to serialise and write.
 */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '\u2026': '&hellip;' };

/** ENTITIES' keys, as a regular-expression class. */
const SPECIAL = `[&<>"'\u2026]`;
const SPECIAL_CHARS = new RegExp(SPECIAL, 'g');

export function escapeHtml(text: string): string {
  return text.replace(SPECIAL_CHARS, (c) => ENTITIES[c]!);
}

/** Between the snippets of several matching columns: the cut mark, escaped as every other one is. */
export const SNIPPET_SEPARATOR = ` ${ENTITIES['\u2026']} `;

/** A match marker or a character HTML gives meaning to: everything markersToHtml rewrites, found in one pass. */
const MARKUP = new RegExp(`${MARK_START}|${MARK_STOP}|${SPECIAL}`, 'g');

/**
 * Engine output with MARK_START/MARK_STOP as escaped HTML with <mark>; markers never nest or stay open. One replace
 * over the text (markers are letters and digits, so they never overlap an escaped character): it runs for every
 * snippet of every page row, after the database has answered, so on the path of every search.
 */
export function markersToHtml(text: string): string {
  let open = false;
  const html = text.replace(MARKUP, (token) => {
    if (token === MARK_START) {
      if (open) return '';
      open = true;
      return '<mark>';
    }
    if (token === MARK_STOP) {
      if (!open) return '';
      open = false;
      return '</mark>';
    }
    return ENTITIES[token]!;
  });
  return open ? `${html}</mark>` : html;
}

/** True when engine output contains a match marker. */
export function hasMarker(text: unknown): boolean {
  return typeof text === 'string' && text.includes(MARK_START);
}

export type MatchStyle =
  /** Whole words (and prefixes), as a full-text index matches them. */
  | 'word'
  /** Anywhere inside the text, as the LIKE fallback matches. */
  | 'substring';

const WORD_CHAR = '[\\p{L}\\p{M}\\p{N}]';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One regular expression that finds any of the terms. */
export function termPattern(terms: PositiveTerm[], style: MatchStyle): RegExp | null {
  if (terms.length === 0) return null;
  const alternatives = terms.map((t) => {
    const word = escapeRegExp(t.word);
    if (style === 'substring') return word;
    return `(?<!${WORD_CHAR})${word}${t.prefix ? `${WORD_CHAR}*` : `(?!${WORD_CHAR})`}`;
  });
  return new RegExp(alternatives.join('|'), 'giu');
}

export const SNIPPET_CHARS = 200;
export const LEAD_CHARS = 60;

/** Text of a field value for highlighting; non-text values are not searched. */
export function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return null;
  return null;
}

/**
 * A snippet of about SNIPPET_CHARS characters around the first match in the column that matches the most of the
 * terms (the first such column on a tie), escaped, with every match in it marked; and which columns match at all.
 */
export function highlightRow(
  fields: Record<string, unknown>,
  columns: string[],
  terms: PositiveTerm[],
  style: MatchStyle,
): { snippet: string; matchedColumns: string[] } {
  const pattern = termPattern(terms, style);
  const matchedColumns: string[] = [];
  let best: { text: string; index: number; terms: number } | null = null;
  for (const column of columns) {
    const text = textOf(fields[column]);
    if (!text || !pattern) continue;
    pattern.lastIndex = 0;
    const match = pattern.exec(text);
    if (!match) continue;
    matchedColumns.push(column);
    const found = terms.length === 1 ? 1 : termsIn(text, terms, style);
    if (!best || found > best.terms) best = { text, index: match.index, terms: found };
  }
  if (!best) {
    const first = columns.map((c) => textOf(fields[c])).find((t): t is string => Boolean(t)) ?? '';
    return { snippet: escapeHtml(cut(first, 0)), matchedColumns };
  }
  const start = Math.max(0, best.index - LEAD_CHARS);
  const window = cut(best.text, start);
  return { snippet: markWindow(window, pattern!), matchedColumns };
}

/** How many of the terms a text holds (each term's own pattern: the alternation finds only the leftmost). */
function termsIn(text: string, terms: PositiveTerm[], style: MatchStyle): number {
  return terms.filter((term) => termPattern([term], style)!.test(text)).length;
}

/** SNIPPET_CHARS characters from `start`, widened to whole words, with … where text was cut (escaped to &hellip;). */
export function cut(text: string, start: number): string {
  let from = start;
  while (from > 0 && /[\p{L}\p{M}\p{N}]/u.test(text[from - 1]!)) from--;
  let to = Math.min(text.length, from + SNIPPET_CHARS);
  while (to < text.length && to - from < SNIPPET_CHARS + 30 && /[\p{L}\p{M}\p{N}]/u.test(text[to]!)) to++;
  const body = text.slice(from, to).replace(/\s+/g, ' ').trim();
  return `${from > 0 ? '… ' : ''}${body}${to < text.length ? ' …' : ''}`;
}

function markWindow(window: string, pattern: RegExp): string {
  let html = '';
  let last = 0;
  pattern.lastIndex = 0;
  for (const match of window.matchAll(pattern)) {
    if (match[0].length === 0) continue;
    html += `${escapeHtml(window.slice(last, match.index))}<mark>${escapeHtml(match[0])}</mark>`;
    last = match.index + match[0].length;
  }
  return html + escapeHtml(window.slice(last));
}
