import type { components } from '../../generated/openapi.js';
import type { RateLimitWindow } from '../rate-limit/decision.js';

export type ErrorCode = components['schemas']['ErrorCode'];

/** What a refusal or failure says beyond its code, in the domain's terms; src/http turns it into status and headers. */
export interface AppErrorFacts {
  /** A limit refused: whole seconds until a retry can be admitted. */
  retryAfterSeconds?: number;
  /** A rate limit refused: the caller's window as it stands, reported with the refusal. */
  rateLimit?: RateLimitWindow;
  /**
   * The database the caller asked to connect (while saving or testing it) could not be reached: what the caller
   * submitted is refused and nothing was saved. The same code during a search is the database's own failure.
   */
  rejectsSubmission?: boolean;
  /** The path exists but not with this method: the methods it takes. */
  allowedMethods?: string[];
}

/**
 * The one error model. Services throw it with a stable code (openapi.yaml's ErrorCode) and never choose an HTTP
 * status or header: the error translator (src/http) does, from the code and the facts.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly facts: AppErrorFacts = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (resource: string, id: string): AppError =>
  new AppError('NOT_FOUND', `No ${resource} with this id.`, { resource, id });

export const notImplemented = (operationId: string): AppError =>
  new AppError('NOT_IMPLEMENTED', 'This operation is in the contract but not built yet.', { operationId });

export interface FieldProblem {
  /** Where the field is: `body`, `query`, `path`, or a header or the request as the contract validator names them. */
  location: string;
  /** JSON pointer of the field, e.g. `/endDate`. */
  path: string;
  message: string;
}

/**
 * The one 400 VALIDATION_ERROR, whoever found it (the contract validator or a service): its message names the first
 * problem, `details.errors` lists them all and `details.omittedErrors` counts any left out.
 */
export function validationError(problems: [FieldProblem, ...FieldProblem[]], omittedErrors = 0): AppError {
  const [first] = problems;
  const where = `${first.location}${first.path === '/' ? '' : first.path}`;
  return new AppError('VALIDATION_ERROR', `The request is invalid: ${where} ${first.message}.`, {
    errors: problems, ...(omittedErrors > 0 && { omittedErrors }),
  });
}
