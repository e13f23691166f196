/** How fresh a table's rows in the index are: what the Indexing views and a search's `databases[]` report. */

/**
 * The moment as of which the index holds every change of the table: the start of its last successful poll, or of
 * its last finished sync, whichever is later (null before its first sync).
 */
export function indexedAsOf(table: { syncStartedAt?: Date | null; syncedAt?: Date | null; changesAsOf?: Date | null }): Date | null {
  const synced = table.syncStartedAt ?? table.syncedAt ?? null;
  if (!synced) return null;
  return table.changesAsOf && table.changesAsOf > synced ? table.changesAsOf : synced;
}

/** Whole seconds from `asOf` to `now` (never negative: clocks of two processes may differ a little). */
export function lagSeconds(asOf: Date | null, now: number): number | null {
  return asOf ? Math.max(0, Math.floor((now - asOf.getTime()) / 1000)) : null;
}
