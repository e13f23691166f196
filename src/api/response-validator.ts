import type { Middleware } from 'koa';
import { ValidationContext, type OpenAPIBackend } from 'openapi-backend';
import type { RequestState } from './types.js';

export interface ContractViolation {
  requestId: string;
  method: string;
  path: string;
  operationId: string | null;
  status: number;
  problems: unknown[];
}

/**
 * Checks every response (body and headers) against openapi.yaml and records what does not match. Tests turn
 * it on and fail on any recorded violation, so the server can never drift from its contract unnoticed.
 */
export function responseValidator(api: OpenAPIBackend, violations: ContractViolation[]): Middleware {
  // Routes the contract does not know (404, 405) have no operation: their body must still be the error envelope.
  // The backend's own Ajv (its options and formats) compiles it from the backend's dereferenced document, so both
  // checks read the contract the same way.
  const envelope = (api.document.components?.schemas as Record<string, object> | undefined)?.ErrorEnvelope;
  if (!envelope) throw new Error('openapi.yaml has no ErrorEnvelope schema');
  const validateEnvelope = api.validator.getAjv(ValidationContext.Response).compile(envelope);

  return async (ctx, next) => {
    await next();
    const state = ctx.state as RequestState;
    const problems: unknown[] = [];
    if (!ctx.response.get('X-Request-Id')) problems.push('missing X-Request-Id header');
    // A streamed body (exports) cannot be read here without consuming it: its headers and status are still checked.
    const isStream = ctx.body !== null && typeof ctx.body === 'object' && typeof (ctx.body as { pipe?: unknown }).pipe === 'function';
    const isJson = !isStream && (ctx.response.is('application/json') || (ctx.body !== null && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body)));
    const body = isJson ? jsonOf(ctx.body) : null;
    if (state.operationId) {
      if (isJson) {
        const result = api.validateResponse(body, state.operationId, ctx.status);
        if (result.errors) problems.push(...result.errors);
      }
      const headers = api.validateResponseHeaders(ctx.response.headers, state.operationId, { statusCode: ctx.status, setMatchType: 'superset' as never });
      if (headers.errors) problems.push(...headers.errors);
      const declared = Object.keys(api.getOperation(state.operationId)?.responses ?? {});
      if (!declared.includes(String(ctx.status)) && !declared.includes('default')) problems.push(`status ${ctx.status} is not declared`);
    } else if (!validateEnvelope(body)) {
      problems.push(...(validateEnvelope.errors ?? []));
    }
    if (problems.length > 0) {
      violations.push({ requestId: state.requestId, method: ctx.method, path: ctx.path, operationId: state.operationId ?? null, status: ctx.status, problems });
    }
  };
}

/** The JSON value a body puts on the wire; JSON sent as text (the contract at /openapi.json) is parsed, not taken as a string. */
function jsonOf(body: unknown): unknown {
  if (typeof body === 'string') return JSON.parse(body);
  if (Buffer.isBuffer(body)) return JSON.parse(body.toString('utf8'));
  return JSON.parse(JSON.stringify(body ?? null));
}
