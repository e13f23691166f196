/**
 * One ranking from many: every engine's ranked lists (the index's one list of every indexed table, each live table's
 * list from its own database). Scores compare only inside a list, so a list whose engine scores it stands alone
 * when it is the only one; otherwise all lists are merged by reciprocal rank fusion and the answer says it is
 * approximate. Every engine ranks its top (offset + limit) rows, so a page is cut from the same merged order whatever
 * was asked before.
 */
import type { EngineHit, Ranking } from '../../search-core/engine.js';
import { fuse } from '../../search-core/rrf.js';

export interface Answer {
  page: Array<{ item: EngineHit<unknown>; score: number }>;
  total: number;
  totalIsEstimate: boolean;
  /** The page was fused from more than one list. */
  approximate: boolean;
}

/** The merged ranking's page at `offset`, with the totals of every engine. */
export function merge(rankings: Array<Ranking<unknown>>, offset: number, limit: number): Answer {
  const lists: Array<Array<EngineHit<unknown>>> = [];
  let total = 0;
  let totalIsEstimate = false;
  let scored = false;
  for (const ranking of rankings) {
    lists.push(...ranking.lists);
    if (ranking.lists.length > 0) scored = ranking.scored;
    total += ranking.total;
    totalIsEstimate ||= ranking.totalIsEstimate;
  }
  if (lists.length === 0 || (lists.length === 1 && scored)) {
    const only = lists[0] ?? [];
    return { page: only.slice(offset, offset + limit).map((item) => ({ item, score: item.score })), total, totalIsEstimate, approximate: false };
  }
  return { page: fuse(lists).slice(offset, offset + limit), total, totalIsEstimate, approximate: lists.length > 1 };
}
