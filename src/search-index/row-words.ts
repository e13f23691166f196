/**
 * Each row's words as relevance feedback reads them (feedback.ts), counted once per version of a space's rows in
 * memory (row-cache.ts) instead of on every search: a row's term vector, as Lucene keeps them and Anserini's RM3
 * reads them ("doc vectors"), rather than its text cut into words again.
 *
 * RM3 reads the text of a search's best rows: the model from its first ten, and each of the best hundred scored
 * again with the model's words. Cutting those hundred texts into words, folding and stemming them was about 2 ms of
 * every natural search on the 100,000-article corpus, the largest part of Quarry's own work in a search. Here each
 * row's words are counted once, when the version's rows are held: distinct words in the order they first occur
 * (so every sum runs in the order the text would give it, and the scores are the same to the last bit), each word an
 * id into the version's list of words, which knows its stem and whether the model may use it.
 */
import { eachWordSpan, stemOfFolded } from './analyzer.js';
import { foldWord, isFoldedStopWord } from '../search-core/stop-words.js';

const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * Characters of a row's text the feedback reads: a row holds up to 100,000 (MAX_INDEX_TEXT_CHARS), and reading 100
 * such rows would hold the server's thread for tens of milliseconds. Longer texts are sampled (feedbackScore).
 */
export const FEEDBACK_TEXT_CHARS = 10_000;
/** Words the model may add: at least two letters, not a bare number (Anserini's filter), and one the index keeps. */
const isModelWord = (folded: string) => folded.length >= 2 && folded.length <= 40 && !allDigits(folded) && !isFoldedStopWord(folded);

function allDigits(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Calls `visit` with each word of a wide run, folded as the index folds it. */
export function eachFoldedWide(run: string, visit: (folded: string) => void): void {
  for (const [raw] of run.matchAll(WORD)) {
    const folded = foldWord(raw);
    if (folded !== '') visit(folded);
  }
}

/**
 * Calls `visit` with each word of `text` folded as the index folds it (lower case, accents removed). The text is cut
 * by its character codes, several times faster than the Unicode expression over every word; only a run holding
 * characters beyond ASCII (accents, dashes, curly quotes) is cut and folded by the expression.
 */
export function eachFoldedWord(text: string, visit: (folded: string) => void): void {
  eachWordSpan(text, (start, end, upper, wide) => {
    const run = text.slice(start, end);
    if (wide) eachFoldedWide(run, visit);
    else visit(upper ? run.toLowerCase() : run);
  });
}


/** One row's words: what feedback reads instead of its text. */
export interface RowWords {
  /** The version's words the ids point into. */
  readonly words: SpaceWords;
  /** Distinct words of the row's first FEEDBACK_TEXT_CHARS characters, stop words left out, in order of first occurrence. */
  readonly ids: Uint32Array;
  /** How often each occurs there. */
  readonly counts: Uint16Array;
  /** Words there in all, stop words left out. */
  readonly length: number;
  /** The text's length over the part counted (1 unless the text is longer than FEEDBACK_TEXT_CHARS; 0 for none). */
  readonly scale: number;
}

/** Bytes a distinct word of the list takes beside its letters (map entry, stem id, flags), roughly. */
const WORD_OVERHEAD = 64;

/** The distinct words of one version's rows, each with its stem (by id) and whether the model may add it. */
export class SpaceWords {
  private readonly idOf = new Map<string, number>();
  private readonly stemIdOf = new Map<string, number>();
  readonly folded: string[] = [];
  /** Each word's stem, by id into `stems`. */
  readonly stemOf: number[] = [];
  readonly stems: string[] = [];
  /** A word the relevance model may add (isModelWord). */
  readonly usable: boolean[] = [];
  bytes = 0;

  /** The id of a folded word that is not a stop word, given one on first sight. */
  id(folded: string): number {
    let id = this.idOf.get(folded);
    if (id !== undefined) return id;
    id = this.folded.length;
    this.idOf.set(folded, id);
    this.folded.push(folded);
    const stemmed = stemOfFolded(folded);
    let stemId = this.stemIdOf.get(stemmed);
    if (stemId === undefined) {
      stemId = this.stems.push(stemmed) - 1;
      this.stemIdOf.set(stemmed, stemId);
      this.bytes += 2 * stemmed.length + WORD_OVERHEAD;
    }
    this.stemOf.push(stemId);
    this.usable.push(isModelWord(folded));
    this.bytes += 2 * folded.length + WORD_OVERHEAD;
    return id;
  }

  /** The id of a stem some word of these rows has, or undefined. */
  stemId(stemmed: string): number | undefined {
    return this.stemIdOf.get(stemmed);
  }
}

/** A typed array that grows as values are appended. */
class Growing<T extends Uint32Array | Uint16Array | Float64Array> {
  length = 0;
  constructor(private data: T) {}

  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new (this.data.constructor as new (n: number) => T)(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }

  done(): T {
    return this.data.slice(0, this.length) as T;
  }
}

/** Every row's words of one version, by the row's place in its VersionRows. */
export class RowWordsTable {
  constructor(
    readonly words: SpaceWords,
    private readonly offsets: Uint32Array,
    private readonly ids: Uint32Array,
    private readonly counts: Uint16Array,
    private readonly lengths: Uint32Array,
    private readonly scales: Float64Array,
  ) {}

  get bytes(): number {
    return this.words.bytes + this.offsets.byteLength + this.ids.byteLength + this.counts.byteLength + this.lengths.byteLength + this.scales.byteLength;
  }

  at(place: number): RowWords {
    const from = this.offsets[place]!;
    const to = this.offsets[place + 1]!;
    return { words: this.words, ids: this.ids.subarray(from, to), counts: this.counts.subarray(from, to), length: this.lengths[place]!, scale: this.scales[place]! };
  }
}

/** Counts rows' words, row by row in place order; `bytes` so far, to give up past a budget. */
export class RowWordsBuilder {
  readonly words = new SpaceWords();
  private readonly offsets = new Growing(new Uint32Array(1024));
  private readonly ids = new Growing(new Uint32Array(65536));
  private readonly counts = new Growing(new Uint16Array(65536));
  private readonly lengths = new Growing(new Uint32Array(1024));
  private readonly scales = new Growing(new Float64Array(1024));

  constructor() {
    this.offsets.push(0);
  }

  get rows(): number {
    return this.lengths.length;
  }

  get bytes(): number {
    return this.words.bytes + 6 * this.ids.length + 16 * this.lengths.length;
  }

  /** The next row's text (null: a row without text). */
  add(text: string | null): void {
    const whole = text ?? '';
    const sample = whole.length > FEEDBACK_TEXT_CHARS ? whole.slice(0, FEEDBACK_TEXT_CHARS) : whole;
    const counted = new Map<number, number>();
    let length = 0;
    eachFoldedWord(sample, (folded) => {
      if (isFoldedStopWord(folded)) return;
      length += 1;
      const id = this.words.id(folded);
      counted.set(id, (counted.get(id) ?? 0) + 1);
    });
    // A word occurs at most FEEDBACK_TEXT_CHARS / 2 times in the part counted: a count always fits 16 bits.
    for (const [id, n] of counted) {
      this.ids.push(id);
      this.counts.push(n);
    }
    this.offsets.push(this.ids.length);
    this.lengths.push(length);
    this.scales.push(whole.length / Math.max(1, sample.length));
  }

  /** The next row as words counted under other ids (another version's): the same words, counts, length and scale. */
  addCounted(row: RowWords): void {
    for (let i = 0; i < row.ids.length; i++) {
      this.ids.push(this.words.id(row.words.folded[row.ids[i]!]!));
      this.counts.push(row.counts[i]!);
    }
    this.offsets.push(this.ids.length);
    this.lengths.push(row.length);
    this.scales.push(row.scale);
  }

  finish(): RowWordsTable {
    return new RowWordsTable(this.words, this.offsets.done(), this.ids.done(), this.counts.done(), this.lengths.done(), this.scales.done());
  }
}

/** Characters of text counted between two yields to other work while a version's words are counted. */
const COUNT_YIELD_CHARS = 64 * 1024;

/**
 * Counts the words of every row held for a version (in the background: other work runs between slices); null when
 * they would not fit in `budget` bytes (known as it goes, from the bytes per row so far and the words listed).
 */
export async function countRowWords(rows: { rows: number; value(column: 'text', place: number): string | null }, budget: number): Promise<RowWordsTable | null> {
  const builder = new RowWordsBuilder();
  let chars = 0;
  for (let place = 0; place < rows.rows; place++) {
    const text = rows.value('text', place);
    builder.add(text);
    chars += Math.min(text?.length ?? 0, FEEDBACK_TEXT_CHARS);
    if (chars >= COUNT_YIELD_CHARS) {
      chars = 0;
      // The rows' part grows with the rows; the list of words far slower (most words are met in the first rows).
      const perRow = (builder.bytes - builder.words.bytes) / builder.rows;
      if (perRow * rows.rows + builder.words.bytes > budget) return null;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const table = builder.finish();
  return table.bytes > budget ? null : table;
}
