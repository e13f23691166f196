/**
 * Reciprocal rank fusion (Cormack, Clarke and Buettcher, 2009), the merge of searchDatabases: scores of different
 * engines are not comparable, ranks are. score(d) = sum over the ranked lists that contain d of 1 / (k + rank),
 * rank 1-based, k = 60. Ties break by id, so the merged order is total and stable across pages.
 */
export const RRF_K = 60;

export interface Ranked {
  /** Identity across lists: the same id in two lists is one result. */
  id: string;
  /** 1-based position in its own list. */
  rank: number;
}

export interface Fused<T> {
  item: T;
  score: number;
}

export function fuse<T extends Ranked>(lists: T[][], k = RRF_K): Fused<T>[] {
  const byId = new Map<string, Fused<T>>();
  for (const list of lists) {
    for (const item of list) {
      const contribution = 1 / (k + item.rank);
      const existing = byId.get(item.id);
      if (existing) existing.score += contribution;
      else byId.set(item.id, { item, score: contribution });
    }
  }
  return [...byId.values()].sort((a, b) => b.score - a.score || (a.item.id < b.item.id ? -1 : a.item.id > b.item.id ? 1 : 0));
}

/**
 * The lowest 0-based position in its own list that a row can have and still land at merged position >= `offset`,
 * when `lists` lists are merged and each row is in one list: a row at position p is preceded by its own list's p rows
 * and by at most p + 1 rows of each other list (equal or better rank), so its merged position is at most
 * p * lists + lists - 1. Rows above this bound cannot be on the page and need no snippet.
 */
export function firstPossiblePosition(offset: number, lists: number): number {
  if (lists <= 1) return offset;
  return Math.max(0, Math.ceil((offset - lists + 1) / lists));
}
