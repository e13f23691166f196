/**
 * The rows written since the postings' version (src/search-index/written-rows.ts): they rank beside the postings
 * only while every change since that version is known, score as the same row among the version's rows would, and
 * mask the version's rows they replace or delete.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TOKEN_BYTES, queryStems } from '../../../src/search-index/analyzer.js';
import { buildPostings, type TextPostings } from '../../../src/search-index/postings.js';
import type { VersionRows } from '../../../src/search-index/row-cache.js';
import { FEEDBACK_TEXT_CHARS, RowWordsBuilder } from '../../../src/search-index/row-words.js';
import { REREAD_SHARE, worthRecording, WRITTEN_ROWS_MAX, WrittenSince, type WrittenRow } from '../../../src/search-index/written-rows.js';

const TEXTS = [
  'harbor engines and copper signals',
  'a forest market by the harbor',
  'copper kettle boiling over the harbor lantern',
  'meadow valley bridges',
  'engines engines engines in the valley',
  'lantern signals from the harbor bridges at night',
];
const srcOf = (place: number) => (place % 2 === 0 ? 'itb_even' : 'itb_odd');

/** The version's rows (version 4) with their postings, and each row's place by rid (r0, r1, ...). */
async function base(): Promise<{ rows: VersionRows; postings: TextPostings }> {
  const builder = new RowWordsBuilder();
  for (const text of TEXTS) builder.add(text);
  const postings = (await buildPostings(builder.finish(), { rows: TEXTS.length, value: (column, place) => (column === 'text' ? TEXTS[place]! : srcOf(place)) }, MAX_TOKEN_BYTES))!;
  const ridPlaces = new Map(TEXTS.map((_, place) => [`r${place}`, place]));
  return { rows: { version: 4, rows: TEXTS.length, ridPlaces, postings } as unknown as VersionRows, postings };
}

const written = (rid: string, text: string, src = 'itb_even'): WrittenRow => ({ rid, src, pk: `{"id":"${rid}"}`, fields: `{"text":"${text}"}`, text, head: '' });

function rank(since: WrittenSince, held: { rows: VersionRows; postings: TextPostings }, words: string, limit = 10, srcs: string[] | null = null) {
  return since.rank(held.rows, held.postings, [...queryStems(words)], limit, srcs);
}

describe('WrittenSince', () => {
  it('when the changes since a version are known and fewer than its share, then they are few; one more, or a gap, and the version is read again', () => {
    const since = new WrittenSince();
    const rows = 100_000;
    const share = REREAD_SHARE * rows;
    since.kept(4, 5); // a fold starts the chain at version 5
    for (let v = 5; v < 5 + share - 1; v++) since.wrote(v, v + 1, [written(`w${v}`, 'harbor')], []);
    const last = 5 + share - 1;
    expect(since.fewSince(5, last, rows)).toBe(true);
    // Counted after the version asked about: from a later version, fewer.
    expect(since.fewSince(last - 10, last, rows)).toBe(true);
    since.wrote(last, last + 1, [], ['r1']);
    expect(since.fewSince(5, last + 1, rows)).toBe(false);
    expect(since.fewSince(6, last + 1, rows)).toBe(true);
    // Not covered: another process wrote, or the version is before the chain.
    expect(since.fewSince(5, last + 2, rows)).toBe(false);
    expect(since.fewSince(4, last + 1, rows)).toBe(false);
    // An empty version: its statistics score nothing, read again after the first write.
    const empty = new WrittenSince();
    empty.kept(1, 2);
    empty.wrote(2, 3, [written('first', 'copper')], []);
    expect(empty.fewSince(2, 3, 0)).toBe(false);
  });

  it('when every write since a version is recorded in order, then it covers that version to the last write; a gap, a change not told or a failure breaks the chain', () => {
    const since = new WrittenSince();
    expect(since.covers(4, 4)).toBe(false);
    since.wrote(4, 5, [written('a', 'harbor')], []);
    since.wrote(5, 6, [], ['r1']);
    expect(since.covers(4, 6)).toBe(true);
    expect(since.covers(5, 6)).toBe(true);
    expect(since.covers(3, 6)).toBe(false);
    // A write of the table not recorded here (another process) moved it on: the current version is past the chain.
    expect(since.covers(4, 7)).toBe(false);
    since.kept(6, 7); // a fold: no row changed
    expect(since.covers(4, 7)).toBe(true);
    since.wrote(8, 9, [written('b', 'harbor')], []); // 7 to 8 was written elsewhere
    expect(since.covers(4, 9)).toBe(false);
    expect(since.covers(8, 9)).toBe(true);
    since.lost(10); // columns added, whole tables dropped
    expect(since.covers(8, 10)).toBe(false);
    expect(since.covers(10, 10)).toBe(true);
    since.lost(null); // a write failed half-way: the version it left is unknown
    expect(since.covers(10, 10)).toBe(false);
  });

  it('when a row is written since the version, then it scores as the same row among the version\'s rows would', async () => {
    const held = await base();
    const since = new WrittenSince();
    // A copy of row 2 under a new rid: the same words and length, scored with the version's statistics.
    since.wrote(4, 5, [written('copy', TEXTS[2]!)], []);
    for (const words of ['harbor', 'copper kettle', 'lantern boiling harbor', 'engines copper']) {
      const ranked = held.postings.rank([...queryStems(words)], 10);
      const original = ranked.scores[[...ranked.places].indexOf(2)];
      const { hits } = rank(since, held, words);
      expect(hits.map((h) => h.row.rid), words).toEqual(['copy']);
      // The postings keep each row's part of the score in 32 bits, as the index does.
      expect(hits[0]!.score, words).toBeCloseTo(original!, 6);
    }
    expect(rank(since, held, 'zyzzyva').hits).toEqual([]);
  });

  it('when a version\'s row is written again or deleted since, then its place is masked, and only its last text ranks', async () => {
    const held = await base();
    const since = new WrittenSince();
    since.wrote(4, 5, [written('r0', 'meadow lighthouse')], []);
    since.wrote(5, 6, [written('r0', 'lighthouse only now')], ['r5']);
    const { hits, skip } = rank(since, held, 'lighthouse meadow');
    expect(hits.map((h) => [h.row.rid, h.row.text])).toEqual([['r0', 'lighthouse only now']]);
    expect([...skip!]).toEqual([1, 0, 0, 0, 0, 1]);
    // The postings pass over the masked rows.
    const ranked = held.postings.rank([...queryStems('harbor lantern')], 10, null, skip);
    expect([...ranked.places].sort()).toEqual([1, 2]);
    // A row deleted is not ranked, even when its rid is written and then deleted since.
    since.wrote(6, 7, [written('gone', 'lighthouse')], []);
    since.wrote(7, 8, [], ['gone']);
    expect(rank(since, held, 'lighthouse').hits.map((h) => h.row.rid)).toEqual(['r0']);
  });

  it('when a search selects tables or a limit, then only those tables\' written rows rank, the best first', async () => {
    const held = await base();
    const since = new WrittenSince();
    since.wrote(4, 5, [written('e1', 'lighthouse'), written('o1', 'lighthouse lighthouse keeper', 'itb_odd'), written('e2', 'lighthouse lighthouse lighthouse')], []);
    expect(rank(since, held, 'lighthouse', 10, ['itb_odd']).hits.map((h) => h.row.rid)).toEqual(['o1']);
    expect(rank(since, held, 'lighthouse', 2).hits.map((h) => h.row.rid)).toEqual(['e2', 'o1']);
  });

  it('when postings of a later version are read, then the changes that version holds are dropped; the rest still rank', async () => {
    const held = await base();
    const since = new WrittenSince();
    since.wrote(4, 5, [written('early', 'lighthouse')], []);
    since.wrote(5, 6, [written('late', 'lighthouse keeper')], []);
    const later = { rows: { ...held.rows, version: 5, ridPlaces: held.rows.ridPlaces } as unknown as VersionRows, postings: held.postings };
    expect(since.covers(5, 6)).toBe(true);
    expect(rank(since, later, 'lighthouse').hits.map((h) => h.row.rid)).toEqual(['late']);
    expect(since.covers(4, 6)).toBe(false);
  });

  it('when a row is written whose text is longer than the postings count whole, then the chain breaks: the searches ask the index', () => {
    const since = new WrittenSince();
    since.wrote(4, 5, [written('a', 'harbor')], []);
    since.wrote(5, 6, [written('long', 'harbor '.repeat(FEEDBACK_TEXT_CHARS / 7 + 1))], []);
    expect(since.covers(4, 6)).toBe(false);
    expect(since.covers(6, 6)).toBe(true);
  });

  it('when one write alone reaches the share of the postings\' rows, then it is not worth recording: the space is read again after it', () => {
    const rows = 100_000;
    // A stream's batch, and the largest write that still leaves the rows written since few.
    expect(worthRecording(100, rows)).toBe(true);
    expect(worthRecording(REREAD_SHARE * rows - 1, rows)).toBe(true);
    // A sync's append of 20,000 rows, and any write to an empty version (its statistics score nothing).
    expect(worthRecording(REREAD_SHARE * rows, rows)).toBe(false);
    expect(worthRecording(20_000, rows)).toBe(false);
    expect(worthRecording(1, 0)).toBe(false);
  });

  it('when more rows are written than it keeps, then it lets go of them: the searches ask the index until later postings are read', () => {
    const since = new WrittenSince();
    const rows = Array.from({ length: WRITTEN_ROWS_MAX + 1 }, (_, i) => written(`w${i}`, 'harbor'));
    since.wrote(4, 5, rows, []);
    expect(since.covers(4, 5)).toBe(false);
    expect(since.covers(5, 5)).toBe(true);
  });
});
