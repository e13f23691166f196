import { statusOfCode, type ErrorCode } from './catalog.js';

/**
 * The one error model. Services throw it with a stable code; the error translator turns it into the
 * envelope. `status` normally follows the code; a few codes answer differently by context (a connection that
 * cannot be established while saving it is the caller's input, 422; the same failure mid-search is 502).
 */
export class AppError extends Error {
  readonly status: number;
  /** Extra response headers (Retry-After and X-RateLimit-* on a 429). */
  headers: Record<string, string> = {};

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    status?: number,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = status ?? statusOfCode[code];
  }

  withHeaders(headers: Record<string, string>): this {
    this.headers = { ...this.headers, ...headers };
    return this;
  }
}

export const notFound = (resource: string, id: string): AppError =>
  new AppError('NOT_FOUND', `No ${resource} with this id.`, { resource, id });

export const notImplemented = (operationId: string): AppError =>
  new AppError('NOT_IMPLEMENTED', 'This operation is in the contract but not built yet.', { operationId });

export interface FieldProblem {
  location: 'query' | 'body' | 'path';
  /** JSON pointer of the field, e.g. `/endDate`. */
  path: string;
  message: string;
}

/** A 400 VALIDATION_ERROR found by a service, in the same shape as the contract validator's (details.errors). */
export function validationError(problems: [FieldProblem, ...FieldProblem[]]): AppError {
  const [first] = problems;
  return new AppError('VALIDATION_ERROR', `The request is invalid: ${first.location}${first.path} ${first.message}.`, { errors: problems });
}
