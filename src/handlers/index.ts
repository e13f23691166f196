import type { OperationHandler } from '../api/types.js';
import * as accounts from './accounts.js';
import * as analytics from './analytics.js';
import * as consolePage from './console.js';
import * as databases from './databases.js';
import * as docs from './docs.js';
import * as health from './health.js';
import * as indexing from './indexing.js';
import * as keys from './keys.js';
import * as management from './management.js';
import * as playground from './playground.js';
import * as rateLimit from './rate-limit.js';
import * as search from './search.js';

/** Every operation handler, keyed by operationId (one file per tag of openapi.yaml). */
export const handlers: Record<string, OperationHandler> = {
  ...health,
  ...accounts,
  ...management,
  ...keys,
  ...databases,
  ...indexing,
  ...search,
  ...analytics,
  ...rateLimit,
  ...docs,
  ...playground,
  ...consolePage,
};
