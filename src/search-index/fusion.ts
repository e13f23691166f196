/**
 * Hybrid search's fusion of the BM25 and the vector ranking of the same index (issue 27): a convex combination of
 * min-max normalised scores (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", 2023).
 * Unlike reciprocal rank fusion it keeps how far apart scores are, so a weak semantic ranking cannot push strong
 * text matches down; `semanticRatio` (0 to 1) is the weight of the vector ranking.
 *
 * score(d) = (1 - r) * norm_text(d) + r * norm_vector(d), norm(x) = (x - min) / (max - min) over that list's
 * candidates (1 when all are equal), 0 for a row the list did not return. Ties break by id.
 */
import type { IndexHit } from './index-store.js';

export function convexFusion(text: IndexHit[], vector: IndexHit[], semanticRatio: number): IndexHit[] {
  const fused = new Map<string, IndexHit>();
  const add = (hits: IndexHit[], weight: number) => {
    if (hits.length === 0 || weight === 0) return;
    const scores = hits.map((h) => h.score);
    const min = Math.min(...scores);
    const span = Math.max(...scores) - min;
    for (const hit of hits) {
      const normalised = span > 0 ? (hit.score - min) / span : 1;
      const entry = fused.get(hit.rid) ?? { rid: hit.rid, src: hit.src, score: 0 };
      entry.score += weight * normalised;
      fused.set(hit.rid, entry);
    }
  };
  add(text, 1 - semanticRatio);
  add(vector, semanticRatio);
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.rid < b.rid ? -1 : a.rid > b.rid ? 1 : 0));
}
