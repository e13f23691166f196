import type { Middleware } from 'koa';
import type { RequestState } from '../api/types.js';
import type { Logger } from '../lib/logger.js';
import type { UsageRecorder } from '../services/rate-limit/usage-recorder.js';

/** Access log line for every request, and a usage count for every API-key request (see UsageRecorder). */
export function usageLog(logger: Logger, recorder: UsageRecorder, now: () => number): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const state = ctx.state as RequestState;
    try {
      await next();
    } finally {
      const durationMs = Math.round(performance.now() - started);
      for (const done of state.onDone) done(ctx.status);
      logger.info({ requestId: state.requestId, method: ctx.method, path: ctx.path, operationId: state.operationId, status: ctx.status, durationMs }, 'request');
      if (state.keyCaller) {
        recorder.record({
          keyId: state.keyCaller.key.id,
          userId: state.keyCaller.user.id,
          endpoint: state.endpoint ?? `${ctx.method} ${ctx.path}`,
          status: ctx.status,
          durationMs,
          rateLimited: state.rateLimited ?? false,
          counted: !state.rateLimitExempt,
          at: now(),
        });
      }
    }
  };
}
