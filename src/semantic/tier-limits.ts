import type { TierName } from '../rate-limit/index.js';

/**
 * Rows of one table that semantic indexing embeds, per plan of the owner's account (openapi.yaml,
 * startSemanticIndex). Rows past the limit, in primary key order, are left out and the job says so (`truncated`).
 */
export const SEMANTIC_ROWS_PER_TABLE: Readonly<Record<TierName, number>> = Object.freeze({
  free: 10_000,
  pro: 100_000,
  enterprise: 1_000_000,
});
