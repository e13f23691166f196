import type { Middleware } from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import { successBody } from '../http/envelope.js';
import type { Services } from '../services/index.js';
import type { HandlerEnv, RawReply, Reply, RequestState } from './types.js';

/** Hands the request to openapi-backend and writes what the handler returned, enveloped. */
export function dispatch(api: OpenAPIBackend, services: Services): Middleware {
  return async (ctx) => {
    const state = ctx.state as RequestState;
    const env: HandlerEnv = { services, state, requestId: state.requestId, ip: ctx.ip };
    const result = (await api.handleRequest(
      {
        method: ctx.method,
        path: ctx.path,
        query: ctx.querystring,
        headers: ctx.headers as Record<string, string | string[]>,
        body: (ctx.request as { body?: unknown }).body,
      },
      env,
    )) as Reply | RawReply;
    ctx.status = result.status;
    if ('raw' in result) {
      ctx.type = result.contentType;
      if (result.headers) ctx.set(result.headers);
      ctx.body = result.raw;
    } else {
      ctx.body = successBody(result.data, state.requestId);
    }
  };
}
