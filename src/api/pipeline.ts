import type { Context, Operation, OpenAPIBackend, ParsedRequest, Request } from 'openapi-backend';
import type { HandlerEnv, RawReply, Reply } from './types.js';

type Handler = (c: Context, env: HandlerEnv) => unknown;
type ParamsValidator = ((data: unknown) => boolean) & { errors?: unknown[] | null };

/** What the contract says about one operation, worked out once at start instead of on every request. */
interface CompiledOperation {
  operation: Operation;
  handler: Handler | undefined;
  /** Each security requirement of the operation as the scheme names that must all pass. */
  requirements: string[][];
  schemes: string[];
  validators: ParamsValidator[];
  /** Query parameters the contract declares as arrays: a single value becomes a one-item array. */
  arrayQueryParams: string[];
}

interface Route {
  compiled: CompiledOperation;
  params: Record<string, string>;
}

export interface PipelineRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
}

const maxRememberedRoutes = 10_000;

/**
 * Form-style query parameters (all the constructor admits): repeated names become arrays. They read the same as
 * through qs, which openapi-backend uses for bracket syntaxes the contract never declares and which took 7% of a
 * key request's CPU in a profile.
 * A parameter named `__proto__` is defined as an own property (an unknown parameter), never set as the prototype.
 */
function parseFormQuery(text: string): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  new URLSearchParams(text).forEach((value, name) => {
    const previous = Object.hasOwn(query, name) ? query[name] : undefined;
    const next = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
    if (name === '__proto__') Object.defineProperty(query, name, { value: next, enumerable: true, writable: true, configurable: true });
    else query[name] = next;
  });
  return query;
}

/** The lifecycle handlers every request may reach; the pipeline refuses to start without them (fail closed). */
const lifecycle = ['notFound', 'methodNotAllowed', 'unauthorizedHandler', 'validationFail', 'notImplemented'] as const;
type Lifecycle = Record<(typeof lifecycle)[number], Handler> & { postRoutingHandler?: Handler; postSecurityHandler?: Handler };

/**
 * openapi-backend's request lifecycle (handleRequest: route, postRouting, security, postSecurity, unauthorized,
 * validation, handler) over openapi-backend's own router, compiled Ajv validators and registered handlers, with
 * the parts whose answer cannot change after start worked out once: the operation a method and path route to (the
 * contract is frozen), its path parameters, its security schemes and its validators. handleRequest re-parses the
 * request three times and re-derives all of that per request (lodash, path templates compiled per call), which was
 * a quarter of a key-authenticated request's CPU in a profile.
 *
 * Supported parameter locations are path and query, which is all openapi.yaml uses; the constructor refuses a
 * contract with header or cookie parameters, or query parameters serialised other than form/explode, rather than
 * validating them differently from openapi-backend.
 */
export class ContractPipeline {
  private readonly operations = new Map<string, CompiledOperation>();
  private readonly routes = new Map<string, Route>();
  private readonly handlers: Lifecycle;

  constructor(private readonly api: OpenAPIBackend) {
    const missing = lifecycle.filter((name) => typeof api.handlers[name] !== 'function');
    if (missing.length) throw new Error(`the request pipeline needs handlers for ${missing.join(', ')}`);
    this.handlers = api.handlers as unknown as Lifecycle;
    for (const operation of api.router.getOperations()) {
      this.operations.set(operation.operationId!, this.compile(operation));
    }
  }

  async handle(request: PipelineRequest, env: HandlerEnv): Promise<Reply | RawReply> {
    const { handlers } = this;
    const query = request.query ? parseFormQuery(request.query) : {};
    const parsed = {
      method: request.method.toLowerCase(),
      path: request.path,
      headers: request.headers as Request['headers'],
      query: query as Request['query'],
      params: {},
      cookies: {},
      body: request.body,
      requestBody: request.body,
    } as ParsedRequest;
    const context = { api: this.api, request: parsed } as unknown as Context;
    let route: Route;
    try {
      route = this.route(request);
    } catch (error) {
      await handlers.postRoutingHandler?.(context, env);
      const notAllowed = error instanceof Error && error.message.startsWith('405');
      return (notAllowed ? handlers.methodNotAllowed : handlers.notFound)(context, env) as Promise<Reply>;
    }
    const { compiled } = route;
    for (const name of compiled.arrayQueryParams) {
      if (typeof query[name] === 'string') query[name] = [query[name]];
    }
    context.operation = compiled.operation;
    // The remembered object itself: nothing before validation writes to it, and validation swaps in its own copy.
    parsed.params = route.params;
    await handlers.postRoutingHandler?.(context, env);

    context.security = await this.authenticate(compiled, context, env);
    await handlers.postSecurityHandler?.(context, env);
    if (!context.security.authorized && compiled.requirements.length > 0) {
      return handlers.unauthorizedHandler(context, env) as Promise<Reply>;
    }

    const errors = this.validate(compiled, parsed);
    context.validation = { valid: errors.length === 0, errors: errors.length ? errors : null } as Context['validation'];
    if (errors.length) return handlers.validationFail(context, env) as Promise<Reply>;
    if (!compiled.handler) return handlers.notImplemented(context, env) as Promise<Reply>;
    return compiled.handler(context, env) as Promise<Reply | RawReply>;
  }

  /** The operation a method and path route to, by openapi-backend's router; remembered, since the contract is frozen. */
  private route(request: PipelineRequest): Route {
    const key = `${request.method} ${request.path}`;
    const known = this.routes.get(key);
    if (known) return known;
    const bare = { method: request.method, path: request.path, headers: {} } as Request;
    const operation = this.api.router.matchOperation(bare, true) as Operation;
    const route: Route = {
      compiled: this.operations.get(operation.operationId!)!,
      params: this.api.router.parseRequest(bare, operation).params as Record<string, string>,
    };
    // Paths carry ids, so the table is bounded; when full it starts again (matching is cheap, just not free).
    if (this.routes.size >= maxRememberedRoutes) this.routes.clear();
    this.routes.set(key, route);
    return route;
  }

  /** openapi-backend's rule: any one requirement whose schemes all return a truthy result without `error`. */
  private async authenticate(compiled: CompiledOperation, c: Context, env: HandlerEnv): Promise<Context['security']> {
    const results: Record<string, unknown> = {};
    const { securityHandlers } = this.api;
    const run = async (name: string) => {
      const handler = securityHandlers[name] as Handler | undefined;
      if (!handler) return;
      try {
        results[name] = await handler(c, env);
      } catch (error) {
        results[name] = { error: error || new Error('security handler rejected') };
      }
    };
    // Schemes run side by side; most operations have one, which needs no Promise.all.
    if (compiled.schemes.length === 1) await run(compiled.schemes[0]!);
    else await Promise.all(compiled.schemes.map(run));
    const passed = (name: string) => {
      const result = results[name];
      return Boolean(result) && !(typeof result === 'object' && (result as { error?: unknown }).error);
    };
    // Set on the object rather than spread into a new one with it: spread-plus-fields is a slow path on Node 20.
    results.authorized = compiled.requirements.some((schemes) => schemes.every(passed));
    return results as Context['security'];
  }

  /**
   * Runs openapi-backend's compiled validators. Ajv coerces query and path values (coerceTypes) in copies, which
   * replace the request's only when all is valid: a rejected request keeps what the client sent.
   */
  private validate(compiled: CompiledOperation, request: ParsedRequest): unknown[] {
    const input: Record<string, unknown> = { path: { ...request.params }, query: { ...request.query }, header: request.headers, cookie: request.cookies };
    if (request.requestBody !== undefined && typeof request.requestBody === 'object') input.requestBody = request.requestBody;
    const errors: unknown[] = [];
    for (const validate of compiled.validators) {
      if (!validate(input) && validate.errors) errors.push(...validate.errors);
    }
    if (errors.length === 0) {
      request.query = input.query as ParsedRequest['query'];
      request.params = input.path as ParsedRequest['params'];
    }
    return errors;
  }

  private compile(operation: Operation): CompiledOperation {
    const parameters = (operation.parameters ?? []) as Array<{ name: string; in: string; schema?: { type?: string }; style?: string; explode?: boolean; content?: unknown }>;
    for (const parameter of parameters) {
      const formQuery = parameter.in === 'query' && !parameter.content && (parameter.style ?? 'form') === 'form' && parameter.explode !== false;
      if (parameter.in !== 'path' && !formQuery) {
        throw new Error(`${operation.operationId}: parameter "${parameter.name}" (in ${parameter.in}) is not supported by the request pipeline`);
      }
    }
    const requirements = (operation.security ?? []).map((requirement) => Object.keys(requirement));
    return {
      operation,
      handler: this.api.handlers[operation.operationId!] as Handler | undefined,
      requirements,
      schemes: [...new Set(requirements.flat())],
      validators: (this.api.validator.getRequestValidatorsForOperation(operation.operationId!) ?? []) as unknown as ParamsValidator[],
      arrayQueryParams: parameters.filter((p) => p.in === 'query' && p.schema?.type === 'array').map((p) => p.name),
    };
  }
}
