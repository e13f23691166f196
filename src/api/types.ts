import type { Readable } from 'node:stream';
import type { Context } from 'openapi-backend';
import type { operations } from '../../generated/openapi.js';
import type { KeyCaller } from '../services/callers.js';
import type { RateLimitWindow } from '../rate-limit/decision.js';
import type { Services } from '../composition.js';

export type OperationId = keyof operations;

type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** Request body of an operation, as the contract defines it (already validated when the handler runs). */
export type BodyOf<O extends OperationId> = JsonContent<NonNullable<operations[O]['requestBody']>>;
export type QueryOf<O extends OperationId> = NonNullable<operations[O]['parameters']['query']>;
export type PathOf<O extends OperationId> = NonNullable<operations[O]['parameters']['path']>;
/** `data` of an operation's success body for a status. */
export type DataOf<O extends OperationId, S extends keyof operations[O]['responses']> =
  JsonContent<operations[O]['responses'][S]> extends { data: infer D } ? D : never;

/** What a JSON handler returns; the dispatcher wraps `data` in the success envelope. */
export interface Reply {
  status: number;
  data: unknown;
  /** Extra response headers (Cache-Control on answers that hold a secret). */
  headers?: Record<string, string>;
}

/** What a handler returns for a non-JSON body (exports). */
export interface RawReply {
  status: number;
  raw: string | Buffer | Readable;
  contentType: string;
  headers?: Record<string, string>;
}

/** Mutable per-request state shared by the layers of one request (Koa's ctx.state). */
export interface RequestState {
  requestId: string;
  operationId?: string;
  /** `METHOD /path/template` of the matched operation, for usage records. */
  endpoint?: string;
  keyCaller?: KeyCaller;
  /** The caller's rate-limit window once admitted: every response of this request reports it (X-RateLimit-*). */
  rateLimit?: RateLimitWindow;
  /** Set when the request rate was refused, for usage records and analytics. */
  rateLimited?: boolean;
  /** Set when the operation does not count against the key's limit. */
  rateLimitExempt?: boolean;
  /** Work to run when the response is done, with its status (releasing a concurrency slot, refunding a try). */
  onDone: Array<(status: number) => void>;
}

export function createRequestState(requestId: string): RequestState {
  return { requestId, onDone: [] };
}

/** Per-request environment handed to every handler next to openapi-backend's context. */
export interface HandlerEnv {
  services: Services;
  state: RequestState;
  requestId: string;
  /** The client's address (the proxy's last X-Forwarded-For entry when TRUST_PROXY is on). */
  ip: string;
  /** This server's origin as the client reached it (scheme and host; the proxy's when TRUST_PROXY is on). */
  ownOrigin: string;
  /** The request body as it arrives, unread: for operations whose body is not JSON (uploadSqliteFile). */
  readonly rawBody: Readable;
}

export type OperationHandler = (c: Context, env: HandlerEnv) => Promise<Reply | RawReply>;

/** An answer that holds a token or a secret key: no cache, browser or proxy may keep it. */
export const secretReply = (answer: Reply): Reply => ({ ...answer, headers: { 'Cache-Control': 'no-store' } });

export const reply = <O extends OperationId, S extends keyof operations[O]['responses'] & number>(
  _operationId: O,
  status: S,
  data: DataOf<O, S>,
): Reply => ({ status, data });
