/**
 * The Cranfield judged collection (../shared/bench/relevance, its README gives the format) and the measures a
 * ranking is judged by: nDCG@10 with graded gains, MAP and recall@100 with binary relevance, and the plain BM25
 * reference every run is compared against.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const RELEVANCE_DIR = fileURLToPath(new URL('../../../../shared/bench/relevance/', import.meta.url));

export interface CranfieldDoc {
  id: number;
  title: string;
  body: string;
}

export interface CranfieldQuery {
  /** 1..225 in file order: what the judgments number the queries by (the file's own `.I` numbers have gaps). */
  n: number;
  text: string;
}

export interface Cranfield {
  docs: CranfieldDoc[];
  queries: CranfieldQuery[];
  /** Per query: judged relevant document id -> gain (5 - code, so 4 for a complete answer down to 1). */
  gains: Map<number, Map<number, number>>;
}

/** SMART records: `.I <id>` starts one, `.T .A .B .W` start fields that run until the next marker. */
function records(file: string): Array<{ id: string; fields: Record<string, string> }> {
  const out: Array<{ id: string; fields: Record<string, string> }> = [];
  let field: string | null = null;
  for (const line of readFileSync(`${RELEVANCE_DIR}${file}`, 'latin1').split('\n')) {
    const marker = /^\.([ITABW])(?:\s+(\S+))?\s*$/.exec(line);
    if (marker?.[1] === 'I') {
      out.push({ id: marker[2]!, fields: {} });
      field = null;
    } else if (marker) {
      field = marker[1]!;
    } else if (field && out.length > 0) {
      const fields = out[out.length - 1]!.fields;
      fields[field] = `${fields[field] ?? ''}${line}\n`;
    }
  }
  return out;
}

const clean = (text: string | undefined) => (text ?? '').replace(/\s+/g, ' ').trim();

export function loadCranfield(): Cranfield {
  const docs = records('cranfield.all').map((r) => ({ id: Number(r.id), title: clean(r.fields.T), body: clean(r.fields.W) }));
  const queries = records('cranfield.qry').map((r, i) => ({ n: i + 1, text: clean(r.fields.W) }));
  const gains = new Map<number, Map<number, number>>();
  for (const line of readFileSync(`${RELEVANCE_DIR}cranfield.rel`, 'latin1').split('\n')) {
    const [q, d, code] = line.trim().split(/\s+/).map(Number);
    if (!q || !d || !(code! >= 1 && code! <= 4)) continue;
    if (!gains.has(q)) gains.set(q, new Map());
    gains.get(q)!.set(d, 5 - code!);
  }
  return { docs, queries, gains };
}

/** Graded nDCG at 10: gain / log2(position + 1), against the ideal order of the query's judged documents. */
export function ndcgAt10(gains: Map<number, number> | undefined, ranked: number[]): number {
  if (!gains || gains.size === 0) return 0;
  const dcg = ranked.slice(0, 10).reduce((sum, id, i) => sum + (gains.get(id) ?? 0) / Math.log2(i + 2), 0);
  const ideal = [...gains.values()].sort((a, b) => b - a).slice(0, 10).reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  return ideal > 0 ? dcg / ideal : 0;
}

/** Average precision over the whole ranking, every judged document relevant (binary). */
export function averagePrecision(gains: Map<number, number> | undefined, ranked: number[]): number {
  if (!gains || gains.size === 0) return 0;
  let found = 0;
  let sum = 0;
  ranked.forEach((id, i) => {
    if (gains.has(id)) sum += ++found / (i + 1);
  });
  return sum / gains.size;
}

export function recallAt100(gains: Map<number, number> | undefined, ranked: number[]): number {
  if (!gains || gains.size === 0) return 0;
  return ranked.slice(0, 100).filter((id) => gains.has(id)).length / gains.size;
}

export interface Measures {
  ndcg10: number;
  map: number;
  recall100: number;
}

/**
 * Two halves of the queries, to choose a method's settings on one and report both: odd and even query
 * numbers (n), a split fixed before any run and blind to the queries' text.
 */
export const HALVES = {
  odd: (query: CranfieldQuery) => query.n % 2 === 1,
  even: (query: CranfieldQuery) => query.n % 2 === 0,
} as const;
export type Half = keyof typeof HALVES;

/**
 * The mean of each measure over every query, or over the queries of one half (a query that found nothing scores 0).
 */
export function measure(collection: Cranfield, rankings: Map<number, number[]>, half?: Half): Measures {
  let ndcg10 = 0;
  let map = 0;
  let recall100 = 0;
  const queries = half ? collection.queries.filter(HALVES[half]) : collection.queries;
  for (const query of queries) {
    const ranked = rankings.get(query.n) ?? [];
    const gains = collection.gains.get(query.n);
    ndcg10 += ndcgAt10(gains, ranked);
    map += averagePrecision(gains, ranked);
    recall100 += recallAt100(gains, ranked);
  }
  const n = queries.length;
  return { ndcg10: ndcg10 / n, map: map / n, recall100: recall100 / n };
}

/**
 * The reference: plain Okapi BM25 (k1 = 1.2, b = 0.75, Lucene's idf) over title and abstract of the whole
 * collection, words lower-cased, no stemming and no stop words: the usual baseline, computed here in the same run.
 */
export function bm25Reference(collection: Cranfield, depth = 100): Map<number, number[]> {
  const tokens = (text: string) => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const docs = collection.docs.map((d) => {
    const words = tokens(`${d.title} ${d.body}`);
    const tf = new Map<string, number>();
    for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
    return { id: d.id, length: words.length, tf };
  });
  const df = new Map<string, number>();
  for (const doc of docs) for (const w of doc.tf.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const n = docs.length;
  const averageLength = docs.reduce((s, d) => s + d.length, 0) / n;
  const k1 = 1.2;
  const b = 0.75;
  const rankings = new Map<number, number[]>();
  for (const query of collection.queries) {
    const terms = [...new Set(tokens(query.text))];
    const scored = docs.map((doc) => {
      let score = 0;
      for (const term of terms) {
        const f = doc.tf.get(term);
        if (!f) continue;
        const idf = Math.log(1 + (n - df.get(term)! + 0.5) / (df.get(term)! + 0.5));
        score += (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * doc.length) / averageLength));
      }
      return { id: doc.id, score };
    }).filter((d) => d.score > 0);
    scored.sort((x, y) => y.score - x.score || x.id - y.id);
    rankings.set(query.n, scored.slice(0, depth).map((d) => d.id));
  }
  return rankings;
}
