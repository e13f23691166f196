import { randomBytes } from 'node:crypto';
import { ApiClient, type ApiResponse, type RequestOptions } from '../../support/api-client.js';
import type { Contract } from './contract.js';

/** One entry of Prism's `sl-violations` header. `location[0]` says whether the request or the response broke the contract. */
export interface Violation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

export interface ProbeResponse<T = any> extends ApiResponse<T> {
  requestViolations: Violation[];
  responseViolations: Violation[];
  /** Prism answered from the mock instead of the server: it does that whenever the upstream says 501. */
  remocked: boolean;
}

export interface ProbeOptions extends RequestOptions {
  /** The test sends a deliberately invalid request: Prism must flag it (and its request violations are expected). */
  invalidRequest?: boolean;
  /** A mocked answer is acceptable (operations that may still be 501 NOT_IMPLEMENTED). */
  allowRemock?: boolean;
}

function parseViolations(header: string | null): Violation[] {
  if (!header) return [];
  try {
    return JSON.parse(header) as Violation[];
  } catch {
    // Prism truncates a very long list ("Too many violations! ..."): count it against both sides.
    return [{ location: ['response'], severity: 'Error', message: header.slice(0, 500) }, { location: ['request'], severity: 'Error', message: 'see the response entry' }];
  }
}

/**
 * Sends requests through `prism proxy` and keeps score: every response violation is a problem, a request violation
 * is a problem unless the request was meant to be invalid, and an answer Prism made up instead of forwarding (it
 * remocks upstream 501s) is a problem unless allowed. Each request carries its own X-Request-Id, which the server
 * echoes, so a remocked answer is recognised by its foreign id.
 */
export class ConformanceProbe {
  /** Statuses seen per operationId, for the coverage check. */
  readonly exercised = new Map<string, Set<number | 'remocked'>>();
  private readonly client: ApiClient;
  private problems: string[] = [];

  constructor(
    proxyUrl: string,
    private readonly contract: Contract,
  ) {
    this.client = new ApiClient(proxyUrl);
  }

  async request<T = any>(method: string, path: string, body?: unknown, options: ProbeOptions = {}): Promise<ProbeResponse<T>> {
    const { invalidRequest = false, allowRemock = false, ...requestOptions } = options;
    const requestId = `contract-${randomBytes(8).toString('hex')}`;
    const headers = { ...requestOptions.headers, 'X-Request-Id': requestId };
    const response = await this.client.request<T>(method, path, body, { ...requestOptions, headers });
    const violations = parseViolations(response.headers.get('sl-violations'));
    const result: ProbeResponse<T> = {
      ...response,
      requestViolations: violations.filter((v) => v.location[0] === 'request'),
      responseViolations: violations.filter((v) => v.location[0] !== 'request'),
      remocked: response.headers.get('x-request-id') !== requestId,
    };

    const call = `${method} ${path} -> ${response.status}`;
    const operation = this.contract.match(method, path);
    if (!operation) this.problems.push(`${call}: no operation of openapi.yaml matches`);
    else {
      const seen = this.exercised.get(operation.operationId) ?? new Set();
      seen.add(result.remocked ? 'remocked' : response.status);
      this.exercised.set(operation.operationId, seen);
    }
    for (const v of result.responseViolations) this.problems.push(`${call}: response violation ${v.severity} at ${v.location.join('.')}: ${v.message}`);
    if (invalidRequest && result.requestViolations.length === 0) this.problems.push(`${call}: the request was meant to be invalid but Prism found no request violation`);
    if (!invalidRequest) for (const v of result.requestViolations) this.problems.push(`${call}: unexpected request violation ${v.severity} at ${v.location.join('.')}: ${v.message}`);
    if (result.remocked && !allowRemock) this.problems.push(`${call}: Prism answered from its mock, not from the server (the server said 501?)`);
    return result;
  }

  get<T = any>(path: string, options?: ProbeOptions) {
    return this.request<T>('GET', path, undefined, options);
  }
  post<T = any>(path: string, body?: unknown, options?: ProbeOptions) {
    return this.request<T>('POST', path, body, options);
  }
  put<T = any>(path: string, body?: unknown, options?: ProbeOptions) {
    return this.request<T>('PUT', path, body, options);
  }
  delete<T = any>(path: string, options?: ProbeOptions) {
    return this.request<T>('DELETE', path, undefined, options);
  }

  /** The problems recorded since the last call, cleared. */
  takeProblems(): string[] {
    return this.problems.splice(0);
  }
}
