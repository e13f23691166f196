import ajvFormats from 'ajv-formats';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import { AppError, notImplemented, validationError, type FieldProblem } from '../errors/app-error.js';
import { successBody } from '../http/envelope.js';
import { loadContract } from '../lib/contract.js';
import type { Services } from '../composition.js';
import { handlers as operationHandlers } from '../handlers/index.js';
import { assertMediaType } from './media-type.js';
import { enforcePolicies } from './policies.js';
import { useRouteTable } from './route-table.js';
import { securityHandlers, unauthorizedHandler } from './security.js';
import type { HandlerEnv, OperationHandler, RawReply, Reply } from './types.js';

interface AjvErrorLike {
  instancePath: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Errors by which a `oneOf`/`anyOf` form says only "this value is not of my shape". */
const SHAPE_KEYWORDS = new Set(['required', 'additionalProperties', 'type']);
const BRANCHING_KEYWORDS = new Set(['oneOf', 'anyOf']);

/**
 * The errors that say what is wrong with a value that matched none of its `oneOf`/`anyOf` forms. Ajv reports every
 * form's complaint: a filter of 51 conditions under `and` was told first that it lacks `column` (the condition form),
 * not that `and` holds more than 50. Where some form got past the value's shape (an error inside the value, or of
 * another kind), that form's errors are the relevant ones: the shape complaints at the value and the `oneOf` summary
 * are dropped. A value no form fits at all keeps every complaint. Linear in the errors: a hostile body can make many.
 */
export function relevantErrors<E extends AjvErrorLike>(errors: E[]): E[] {
  const byPath = new Map<string, E[]>();
  /** Paths with an error somewhere inside them. */
  const enclosing = new Set<string>();
  for (const error of errors) {
    const path = error.instancePath;
    const here = byPath.get(path);
    if (here) here.push(error);
    else byPath.set(path, [error]);
    for (let cut = path.lastIndexOf('/'); cut >= 0; cut = path.lastIndexOf('/', cut - 1)) {
      const parent = path.slice(0, cut);
      if (enclosing.has(parent)) break; // and so are its own parents
      enclosing.add(parent);
      if (cut === 0) break;
    }
  }
  const isBranching = (error: E) => BRANCHING_KEYWORDS.has(error.keyword ?? '');
  const isShape = (error: E) => SHAPE_KEYWORDS.has(error.keyword ?? '');
  const drop = new Set<E>();
  for (const [path, here] of byPath) {
    if (!here.some(isBranching)) continue;
    const gotFurther = enclosing.has(path) || here.some((error) => !isShape(error) && !isBranching(error));
    if (gotFurther) for (const error of here) if (isShape(error) || isBranching(error)) drop.add(error);
  }
  return drop.size === 0 ? errors : errors.filter((error) => !drop.has(error));
}

/** Ajv errors in words a client can act on: where (body, query, path), which field, what is wrong. */
export function describeValidationErrors(errors: AjvErrorLike[]): { location: string; path: string; message: string }[] {
  return errors.map((error) => {
    const [, location = 'request', ...rest] = error.instancePath.split('/');
    const extra = error.params?.additionalProperty ?? error.params?.missingProperty;
    const path = '/' + [...rest, ...(extra ? [String(extra)] : [])].join('/');
    const message = error.params?.additionalProperty
      ? 'is not a known field'
      : error.params?.allowedValues
        ? `${error.message}: ${(error.params.allowedValues as unknown[]).join(', ')}`
        : error.message ?? 'is invalid';
    return { location: location === 'requestBody' ? 'body' : location, path, message };
  });
}

/** The most problems one VALIDATION_ERROR describes (`details.omittedErrors` counts the rest). */
export const MAX_VALIDATION_PROBLEMS = 20;

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;

/** The methods a path takes, asked of openapi-backend's own router (for a 405's `Allow`). */
export function allowedMethods(api: OpenAPIBackend, path: string): string[] {
  return METHODS.filter((method) => api.router.matchOperation({ method, path, headers: {} }, false)).map((method) => method.toUpperCase());
}

/** How openapi-backend reads openapi.yaml and validates requests: shared with the benchmark's contract-only baseline. */
export function backendOptions(strict: boolean): ConstructorParameters<typeof OpenAPIBackend>[0] {
  return {
    definition: structuredClone(loadContract()) as never,
    strict,
    validate: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, strict: false },
    customizeAjv: (ajv: unknown) => {
      // ajv-formats is CommonJS: its function is the module itself or its `default`, depending on the loader.
      const addFormats = ((ajvFormats as unknown as { default?: unknown }).default ?? ajvFormats) as (ajv: unknown) => void;
      addFormats(ajv);
      return ajv as never;
    },
  };
}

/** What a request ends as, for Koa to write: the JSON envelope, or a handler's raw body (exports, docs). */
export interface ApiResponse {
  status: number;
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/** Wraps what an operation handler returned: JSON data in the success envelope, raw bodies as they are. */
function toResponse(result: Reply | RawReply, requestId: string): ApiResponse {
  if ('raw' in result) return { status: result.status, body: result.raw, contentType: result.contentType, headers: result.headers };
  return { status: result.status, body: successBody(result.data, requestId), headers: result.headers };
}

/**
 * openapi-backend's lifecycle hooks (its documented special handlers). Failures are thrown as AppErrors, so that
 * they reach the one error translator like every other error; only a handler's success reaches postResponseHandler.
 */
function lifecycle(api: OpenAPIBackend) {
  return {
    postRoutingHandler: async (c: Context, env: HandlerEnv) => {
      if (!c.operation) return;
      env.state.operationId = c.operation.operationId;
      env.state.endpoint = `${c.operation.method.toUpperCase()} ${c.operation.path}`;
      assertMediaType(c);
    },
    postSecurityHandler: enforcePolicies,
    unauthorizedHandler,
    validationFail: async (c: Context) => {
      // At most MAX_VALIDATION_PROBLEMS are described: a body of 95,554 unknown fields made a 6.7 MB answer.
      const found = relevantErrors((c.validation.errors ?? []) as AjvErrorLike[]);
      const errors = describeValidationErrors(found.slice(0, MAX_VALIDATION_PROBLEMS));
      throw validationError(errors as [FieldProblem, ...FieldProblem[]], found.length - errors.length);
    },
    notFound: async () => {
      throw new AppError('ROUTE_NOT_FOUND', 'No such endpoint. See /openapi.yaml for the operations this API has.');
    },
    methodNotAllowed: async (c: Context) => {
      const allowed = allowedMethods(api, c.request.path);
      throw new AppError('METHOD_NOT_ALLOWED', `${c.request.method.toUpperCase()} is not allowed on ${c.request.path}; it takes ${allowed.join(', ')}.`, { allowed }, { allowedMethods: allowed });
    },
    notImplemented: async (c: Context) => {
      throw notImplemented(c.operation.operationId ?? 'unknown');
    },
    postResponseHandler: async (c: Context, env: HandlerEnv) => toResponse(c.response as Reply | RawReply, env.requestId),
  };
}

/**
 * The contract is the route table: openapi-backend's handleRequest matches the operation, runs the security
 * handlers, our policies, validation, then `handlers[operationId]`. The contract's routes are laid out
 * once, after init (RouteTable), instead of on every request. Handlers are registered after init, so strict mode
 * refuses one whose operationId the contract does not name, and the start fails.
 */
export async function createApiBackend(services: Services, handlers: Record<string, OperationHandler> = operationHandlers): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend(backendOptions(true));
  await api.init();
  useRouteTable(api);
  api.register({ ...lifecycle(api), ...handlers } as never);
  for (const [name, handler] of Object.entries(securityHandlers(services))) api.registerSecurityHandler(name, handler);
  return api;
}
