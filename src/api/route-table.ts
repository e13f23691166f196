import { OpenAPIRouter, type OpenAPIBackend, type Operation, type ParsedRequest, type Request } from 'openapi-backend';

type Document = OpenAPIBackend['definition'];

/** One path of the contract: the pattern a request path must match, and its operations by method. */
interface PathEntry {
  pattern: RegExp;
  byMethod: Map<string, Operation>;
}

/** How many `/` a path has: a parameter never spans one, so a request path matches only templates with as many. */
function slashes(path: string): number {
  let count = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) count++;
  return count;
}

/** A path template as the pattern openapi-backend documents: each `{parameter}` is one non-empty segment part. */
function templatePattern(template: string): RegExp {
  const literal = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('[^/]+')}$`);
}

/**
 * openapi-backend's router with the contract's operations laid out once. The library flattens the whole definition
 * into a fresh operation list, and compiles a pattern per path, on every request it routes; the contract does not
 * change after `init()`, so this router builds the list, the literal paths and the compiled templates when it is
 * made and answers each request from them: the same operation, the same 404 and 405, at a cost that does not grow
 * with every request. Normalising and parsing a request are the library's own; a request parsed against the same
 * operation again (parseRequest) is answered from the first parse.
 */
export class RouteTable extends OpenAPIRouter<Document> {
  private readonly operations: Operation[];
  private readonly byOperationId = new Map<string, Operation>();
  private readonly literal = new Map<string, Map<string, Operation>>();
  /** Templates by their number of `/`, most specific first (the library's order: longest literal text, then as written). */
  private readonly templates = new Map<number, PathEntry[]>();

  constructor(opts: ConstructorParameters<typeof OpenAPIRouter<Document>>[0]) {
    super(opts);
    this.operations = super.getOperations();
    const entries = new Map<string, PathEntry>();
    for (const operation of this.operations) {
      if (operation.operationId && !this.byOperationId.has(operation.operationId)) this.byOperationId.set(operation.operationId, operation);
      let entry = entries.get(operation.path);
      if (!entry) entries.set(operation.path, (entry = { pattern: templatePattern(operation.path), byMethod: new Map() }));
      if (!entry.byMethod.has(operation.method)) entry.byMethod.set(operation.method, operation);
    }
    const specificity = (path: string) => path.replace(/\{.*?\}/g, '').length;
    const ordered = [...entries].sort(([a], [b]) => specificity(b) - specificity(a));
    for (const [path, entry] of ordered) {
      this.literal.set(path, entry.byMethod);
      const depth = slashes(path.replace(/\{[^}]+\}/g, ''));
      this.templates.set(depth, [...(this.templates.get(depth) ?? []), entry]);
    }
  }

  /** Each request's parse against its operation, while the request is in use. */
  private readonly parsed = new WeakMap<Request, { operation: Operation; request: ParsedRequest }>();

  /**
   * The library parses one request against its operation twice: when routing it (handleRequest) and again when
   * validating it (validateRequest), each time copying its headers, cookies and query and compiling the operation's
   * path template (a CPU profile of GET /rate-limit/status under load: 22 % of the server's time in parseRequest,
   * three or four parses a request). The second parse of the same request object against the same operation is the
   * first. Nothing changes the request between the two, and the validator only reads the parse (the query arrays it
   * makes are written into it, as into its own parse, before the request is parsed again from the coerced values).
   */
  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    if (!operation) return super.parseRequest(req);
    const known = this.parsed.get(req);
    if (known?.operation === operation) return known.request;
    const request = super.parseRequest(req, operation);
    this.parsed.set(req, { operation, request });
    return request;
  }

  override getOperations(): Operation[] {
    // A copy of the list, so that a caller sorting or filtering it in place cannot change the routes.
    return [...this.operations];
  }

  override getOperation(operationId: string): Operation | undefined {
    return this.byOperationId.get(operationId);
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: boolean): Operation;
  override matchOperation(req: Request, strict?: boolean): Operation | undefined {
    const { path: requested, method } = this.normalizeRequest(req);
    if (!this.isUnder(requested)) return this.miss(strict, '404-notFound: no route matches request');
    const path = this.normalizePath(requested);
    const exact = this.literal.get(path)?.get(method);
    if (exact) return exact;
    let pathMatched = false;
    for (const entry of this.templates.get(slashes(path)) ?? []) {
      if (!entry.pattern.test(path)) continue;
      pathMatched = true;
      const operation = entry.byMethod.get(method);
      if (operation) return operation;
    }
    return pathMatched
      ? this.miss(strict, '405-methodNotAllowed: this method is not registered for the route')
      : this.miss(strict, '404-notFound: no route matches request');
  }

  /** Whether a path is the API root or below it, on a segment boundary (`/apiadmin` is not under `/api`). */
  private isUnder(path: string): boolean {
    if (this.apiRoot === '/') return path.startsWith('/');
    const root = this.apiRoot.replace(/\/$/, '');
    return path === root || path.startsWith(`${root}/`);
  }

  /** No operation: strict routing throws the library's own message (handleRequest tells 404 from 405 by it). */
  private miss(strict: boolean | undefined, message: string): undefined {
    if (strict) throw new Error(message);
    return undefined;
  }
}

/**
 * Routes an initialised backend through a RouteTable on the same definition and options. `router` (and the
 * validator's, which parses each request's parameters) are the backend's public properties, set by `init()`.
 */
export function useRouteTable(api: OpenAPIBackend): RouteTable {
  const router = new RouteTable({ definition: api.definition, apiRoot: api.apiRoot, ignoreTrailingSlashes: api.ignoreTrailingSlashes });
  api.router = router;
  if (api.validator) api.validator.router = router;
  return router;
}
