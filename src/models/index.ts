import type { Sequelize } from 'sequelize';
import { ApiKeyModel } from './api-key.js';
import { DatabaseConnectionModel } from './database-connection.js';
import { RateLimitViolationModel } from './rate-limit-violation.js';
import { RequestUsageModel } from './request-usage.js';
import { SearchRecordModel } from './search-record.js';
import { IndexJobModel } from './index-job.js';
import { IndexTableModel } from './index-table.js';
import { SessionModel } from './session.js';
import { SettingModel } from './setting.js';
import { SqliteFileChunkModel, SqliteFileModel } from './sqlite-file.js';
import { SqliteUploadReservationModel } from './sqlite-upload-reservation.js';
import { UserModel } from './user.js';

let boundTo: Sequelize | null = null;

/**
 * Binds every model to one Sequelize instance. Only repositories import the models. Model classes are
 * process-wide, so one process serves one store at a time: a second live binding is refused rather than
 * silently redirecting the first server's queries.
 */
export function setupModels(sequelize: Sequelize): void {
  if (boundTo && boundTo !== sequelize) throw new Error('Another Quarry server in this process is still using the models; stop it first.');
  boundTo = sequelize;
  for (const model of [UserModel, SessionModel, ApiKeyModel, RequestUsageModel, SettingModel, RateLimitViolationModel, DatabaseConnectionModel, SearchRecordModel, IndexTableModel, IndexJobModel, SqliteUploadReservationModel, SqliteFileModel, SqliteFileChunkModel]) model.setup(sequelize);
}

/** Releases the binding when a server stops, so the next one in this process can bind. */
export function releaseModels(sequelize: Sequelize): void {
  if (boundTo === sequelize) boundTo = null;
}

export { ApiKeyModel, DatabaseConnectionModel, RateLimitViolationModel, RequestUsageModel, IndexJobModel, IndexTableModel, SearchRecordModel, SessionModel, SettingModel, SqliteFileChunkModel, SqliteFileModel, SqliteUploadReservationModel, UserModel };
