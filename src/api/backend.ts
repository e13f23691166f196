import ajvFormats from 'ajv-formats';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import { AppError, notImplemented } from '../errors/app-error.js';
import type { Services } from '../services/index.js';
import { loadContract } from './contract.js';
import { handlers } from '../handlers/index.js';
import { assertMediaType } from './media-type.js';
import { enforcePolicies } from './policies.js';
import { securityHandlers, unauthorizedHandler } from './security.js';
import type { HandlerEnv } from './types.js';

interface AjvErrorLike {
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
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

/**
 * openapi-backend rebuilds its flat operation list (lodash over every path) on each routing call, which was a
 * fifth of a request's CPU; the contract does not change after init, so the list is built once.
 */
export function freezeOperations(api: OpenAPIBackend): void {
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
}

/**
 * The contract is the route table: openapi-backend matches the operation, runs the security handlers, our
 * policies, validation, then `handlers[operationId]` (STYLE.md §1). Strict mode refuses handlers the contract
 * does not name.
 */
export async function createApiBackend(services: Services): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend(backendOptions(true));
  const endpoints = new Map<string, string>();
  api.register({
    ...handlers,
    postRoutingHandler: async (c: Context, env: HandlerEnv) => {
      if (c.operation) {
        const operationId = c.operation.operationId!;
        env.state.operationId = operationId;
        let endpoint = endpoints.get(operationId);
        if (!endpoint) endpoints.set(operationId, (endpoint = `${c.operation.method.toUpperCase()} ${c.operation.path}`));
        env.state.endpoint = endpoint;
        assertMediaType(c);
      }
    },
    postSecurityHandler: enforcePolicies,
    unauthorizedHandler,
    validationFail: async (c: Context) => {
      // At most MAX_VALIDATION_PROBLEMS are described: a body of 95,554 unknown fields made a 6.7 MB answer.
      const found = (c.validation.errors ?? []) as AjvErrorLike[];
      const errors = describeValidationErrors(found.slice(0, MAX_VALIDATION_PROBLEMS));
      const first = errors[0];
      const omitted = found.length - errors.length;
      throw new AppError('VALIDATION_ERROR', `The request is invalid: ${first.location}${first.path === '/' ? '' : first.path} ${first.message}.`, {
        errors, ...(omitted > 0 && { omittedErrors: omitted }),
      });
    },
    notFound: async () => {
      throw new AppError('ROUTE_NOT_FOUND', 'No such endpoint. See /openapi.yaml for the operations this API has.');
    },
    methodNotAllowed: async (c: Context) => {
      const allowed = allowedMethods(api, c.request.path);
      throw new AppError('METHOD_NOT_ALLOWED', `${c.request.method.toUpperCase()} is not allowed on ${c.request.path}; it takes ${allowed.join(', ')}.`, { allowed })
        .withHeaders({ Allow: allowed.join(', ') });
    },
    notImplemented: async (c: Context) => {
      throw notImplemented(c.operation.operationId ?? 'unknown');
    },
  });
  for (const [name, handler] of Object.entries(securityHandlers(services))) api.registerSecurityHandler(name, handler);
  await api.init();
  freezeOperations(api);
  return api;
}
