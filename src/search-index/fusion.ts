/**
 * Hybrid search's fusion of the BM25 and the vector ranking of the same index: a convex combination of
 * min-max normalised scores (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", 2023).
 * Unlike reciprocal rank fusion it keeps how far apart scores are; `semanticRatio` (0 to 1) is the weight of the
 * vector ranking.
 *
 * A fixed weight lets a weak embedding model pull the ranking below the text's, so the vector ranking's weight
 * follows how far the two rankings agree on their best rows (agreementFusion). Relevant rows are the ones two good rankings tend to share, while the irrelevant rows they return differ (Lee, "Analyses of Multiple
 * Evidence Combination", SIGIR 1997, the observation behind CombMNZ); a model whose best rows the text ranking does
 * not share at all is mostly noise for that query, and then leaves the text's ranking as it is.
 *
 * score(d) = (1 - r) * norm_text(d) + r * norm_vector(d), 0 for a row the list did not return. Ties break by id.
 * norm(x) = (x - floor) / (max - floor) over that list's candidates, where the floor is the lowest score the list
 * could hold, not the lowest it holds (Bruch et al.'s "theoretical min-max"): 0 for BM25, the minimum similarity of
 * a match for vectors. So a list's last row keeps what it scored (not 0 because it came last), and a short list of
 * close scores is not stretched from 0 to 1. 1 when every score is at the floor.
 */
import type { IndexHit } from './index-store.js';

/** Best rows of each ranking compared to measure their agreement: the first page of a search. */
export const AGREEMENT_DEPTH = 10;

/**
 * How far two rankings agree, 0 to 1: the share of the shorter of their first pages (`depth` rows at most) that the
 * other's first page holds too. 0 when either is empty.
 */
export function agreement(text: IndexHit[], vector: IndexHit[], depth = AGREEMENT_DEPTH): number {
  const page = Math.min(depth, text.length, vector.length);
  if (page === 0) return 0;
  const best = new Set(text.slice(0, depth).map((h) => h.rid));
  return Math.min(1, vector.slice(0, depth).filter((h) => best.has(h.rid)).length / page);
}

/**
 * The convex fusion with the vector ranking weighted semanticRatio x agreement: the full ratio when the two rankings
 * share their first page, none when they share nothing. With no text ranking (no word matched, or semanticRatio 1)
 * the vector ranking stands alone.
 */
export function agreementFusion(text: IndexHit[], vector: IndexHit[], semanticRatio: number, floors: Floors = NO_FLOORS): IndexHit[] {
  const ratio = text.length === 0 ? semanticRatio : semanticRatio * agreement(text, vector);
  return convexFusion(text, vector, ratio, floors);
}

/** The lowest score each list could hold (its theoretical minimum). */
export interface Floors {
  text: number;
  vector: number;
}
const NO_FLOORS: Floors = { text: 0, vector: 0 };

export function convexFusion(text: IndexHit[], vector: IndexHit[], semanticRatio: number, floors: Floors = NO_FLOORS): IndexHit[] {
  const fused = new Map<string, IndexHit>();
  const add = (hits: IndexHit[], weight: number, floor: number) => {
    if (hits.length === 0 || weight === 0) return;
    const span = Math.max(...hits.map((h) => h.score)) - floor;
    for (const hit of hits) {
      const normalised = span > 0 ? Math.max(0, hit.score - floor) / span : 1;
      const entry = fused.get(hit.rid) ?? { rid: hit.rid, src: hit.src, score: 0 };
      entry.score += weight * normalised;
      fused.set(hit.rid, entry);
    }
  };
  add(text, 1 - semanticRatio, floors.text);
  add(vector, semanticRatio, floors.vector);
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.rid < b.rid ? -1 : a.rid > b.rid ? 1 : 0));
}
