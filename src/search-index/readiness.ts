/**
 * When an indexed table answers semantic search: semantic search is on for it and its last finished sync embedded its
 * rows with the model searches embed the words with (vectors of two models are never compared). The Indexing tag's
 * views and the search's plan ask this one rule.
 */
import type { IndexTableRecord } from '../repositories/index-table-repository.js';

export function semanticReady(entry: Pick<IndexTableRecord, 'semantic' | 'syncedAt' | 'vectorModel'> | null | undefined, providerId: string): boolean {
  return Boolean(entry?.semantic && entry.syncedAt && entry.vectorModel === providerId);
}
