import type { ConnectorError } from '../../connectors/index.js';
import { AppError } from '../../errors/app-error.js';

/** A connector failure as our error; while saving a connection, a database that cannot be reached refuses the submission. */
export function fromConnectorError(error: ConnectorError, whileSaving: boolean, databaseId?: string): AppError {
  return new AppError(error.code, error.message, { ...error.details, ...(databaseId && { databaseId }) }, { rejectsSubmission: whileSaving });
}
