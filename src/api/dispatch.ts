import type { Middleware } from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import type { Services } from '../composition.js';
import type { ApiResponse } from './backend.js';
import type { HandlerEnv, RequestState } from './types.js';

/** Hands the request to openapi-backend (`api.handleRequest`) and writes the response it ends as. */
export function dispatch(api: OpenAPIBackend, services: Services): Middleware {
  return async (ctx) => {
    const state = ctx.state as RequestState;
    const env: HandlerEnv = { services, state, requestId: state.requestId, ip: ctx.ip, // Koa's ctx.origin is the request's Origin header, not this server's own.
    ownOrigin: `${ctx.protocol}://${ctx.host}`, rawBody: ctx.req };
    const response = (await api.handleRequest(
      {
        method: ctx.method,
        path: ctx.path,
        // Koa's parsed query: form style, a repeated name an array, `a[b]` a name like any other. The contract
        // declares no other style, so a bracket name is an unknown parameter rather than a nested object.
        query: ctx.query as Record<string, string | string[]>,
        headers: ctx.headers as Record<string, string | string[]>,
        body: (ctx.request as { body?: unknown }).body,
      },
      env,
    )) as ApiResponse;
    ctx.status = response.status;
    if (response.contentType) ctx.type = response.contentType;
    if (response.headers) ctx.set(response.headers);
    ctx.body = response.body;
  };
}
