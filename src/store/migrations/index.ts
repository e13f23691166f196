import type { QueryInterface } from 'sequelize';
import * as initialSchema from './0001-initial-schema.js';
import * as analyticsIndexes from './0002-analytics-indexes.js';
import * as semanticIndex from './0003-semantic-index.js';
import * as requestUsageRollups from './0004-request-usage-rollups.js';
import * as searchIndex from './0020-search-index.js';
import * as searchIndexColumns from './0021-search-index-columns.js';
import * as indexJobAttempts from './0022-index-job-attempts.js';
import * as publishableKeys from './0015-publishable-keys.js';
import * as accountPlans from './0010-account-plans.js';
import * as sqliteUploadReservations from './0023-upload-reservations.js';
import * as indexTableSyncedColumns from './0024-index-table-synced-columns.js';
import * as sqliteFiles from './0025-uploaded-files.js';
import * as indexTableChanges from './0026-index-table-changes.js';
import * as indexTableStream from './0027-index-table-stream.js';

export interface Migration {
  name: string;
  up(queryInterface: QueryInterface): Promise<void>;
  down(queryInterface: QueryInterface): Promise<void>;
}

/** Every migration, oldest first. Never edit one that has shipped; add the next. */
export const migrations: Migration[] = [
  { name: '0001-initial-schema', ...initialSchema },
  { name: '0002-analytics-indexes', ...analyticsIndexes },
  { name: '0003-semantic-index', ...semanticIndex },
  { name: '0004-request-usage-rollups', ...requestUsageRollups },
  { name: '0020-search-index', ...searchIndex },
  { name: '0021-search-index-columns', ...searchIndexColumns },
  { name: '0015-publishable-keys', ...publishableKeys },
  { name: '0010-account-plans', ...accountPlans },
  { name: '0022-index-job-attempts', ...indexJobAttempts },
  { name: '0023-upload-reservations', ...sqliteUploadReservations },
  { name: '0024-index-table-synced-columns', ...indexTableSyncedColumns },
  { name: '0025-uploaded-files', ...sqliteFiles },
  { name: '0026-index-table-changes', ...indexTableChanges },
  { name: '0027-index-table-stream', ...indexTableStream },
];
