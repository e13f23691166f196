import type { Readable } from 'node:stream';
import type { Context as KoaContext, Middleware } from 'koa';
import { successBody } from '../http/envelope.js';
import type { Services } from '../services/index.js';
import type { ContractPipeline } from './pipeline.js';
import type { KeyCaller } from '../services/callers.js';
import type { HandlerEnv, RawReply, Reply, RequestState } from './types.js';

/**
 * One request's HandlerEnv. The client address is read only where a limit is per IP (behind a proxy that means
 * parsing X-Forwarded-For); a class, because an object literal with a getter is built on a slow path.
 */
class RequestEnv implements HandlerEnv {
  keyCaller?: KeyCaller;
  readonly requestId: string;

  constructor(readonly services: Services, readonly state: RequestState, private readonly ctx: KoaContext) {
    this.requestId = state.requestId;
  }

  get ip(): string {
    return this.ctx.ip;
  }

  get rawBody(): Readable {
    return this.ctx.req;
  }
}

/** Hands the request to the contract's pipeline and writes what the handler returned, enveloped. */
export function dispatch(pipeline: ContractPipeline, services: Services): Middleware {
  return async (ctx) => {
    const state = ctx.state as RequestState;
    const env = new RequestEnv(services, state, ctx);
    const result = await pipeline.handle(
      {
        method: ctx.method,
        path: ctx.path,
        query: ctx.querystring,
        headers: ctx.headers as Record<string, string | string[]>,
        body: (ctx.request as { body?: unknown }).body,
      },
      env,
    );
    ctx.status = result.status;
    if ('raw' in result) {
      ctx.type = result.contentType;
      if (result.headers) ctx.set(result.headers);
      ctx.body = result.raw;
    } else {
      if (result.headers) ctx.set(result.headers);
      ctx.body = successBody(result.data, state.requestId);
    }
  };
}
