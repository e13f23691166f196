import Koa from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import { createApiBackend } from './api/backend.js';
import { dispatch } from './api/dispatch.js';
import { responseValidator, type ContractViolation } from './api/response-validator.js';
import type { Config } from './config/config.js';
import { crossOrigin } from './http/cors.js';
import { errorTranslator } from './http/error-translator.js';
import { jsonBody } from './http/json-body.js';
import { requestId } from './http/request-id.js';
import { wellFormedUrl } from './http/request-target.js';
import { usageLog } from './http/usage-log.js';
import { contractMethods } from './lib/contract.js';
import { accessLogger, type Logger } from './lib/logger.js';
import type { Services } from './composition.js';

export interface QuarryApp {
  koa: Koa;
  api: OpenAPIBackend;
  /** Responses that did not match openapi.yaml (only recorded when VALIDATE_RESPONSES is on). */
  contractViolations: ContractViolation[];
  /** From now on every response closes its connection (a stop: clients must not keep sending on kept-alive ones). */
  drain(): void;
}

/**
 * The middleware, outermost first: closing connections once the server drains, CORS (a preflight ends there),
 * request id, access/usage log, contract check of the response, the one error translator, the check that the URL
 * decodes, JSON body parsing, then openapi-backend's request lifecycle, which routes by openapi.yaml.
 */
export async function createApp(config: Config, logger: Logger, services: Services): Promise<QuarryApp> {
  const api = await createApiBackend(services);
  // Behind a trusted proxy, the client is the address that proxy appended: the last X-Forwarded-For entry.
  // Earlier entries are whatever the client sent, so they are never believed.
  const koa = new Koa({ proxy: config.trustProxy, maxIpsCount: 1 });
  const contractViolations: ContractViolation[] = [];
  let draining = false;
  // Outermost: whatever answers, once the server stops, the answer ends its connection. A client reusing kept-alive
  // connections would otherwise keep a stopping server busy forever (SIGTERM under load).
  koa.use(async (ctx, next) => {
    try {
      await next();
    } finally {
      if (draining) ctx.set('Connection', 'close');
    }
  });
  koa.use(crossOrigin(config.corsOrigins, contractMethods()));
  koa.use(requestId());
  koa.use(usageLog(accessLogger(logger), services.usage, services.clock));
  if (config.validateResponses) koa.use(responseValidator(api, contractViolations));
  koa.use(errorTranslator(logger));
  koa.use(wellFormedUrl());
  koa.use(jsonBody(config.bodyLimit));
  koa.use(dispatch(api, services));
  koa.on('error', (error) => logger.debug({ err: error }, 'koa error event'));
  return { koa, api, contractViolations, drain: () => void (draining = true) };
}
