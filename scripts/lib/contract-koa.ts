/**
 * A second baseline of `npm run bench`: Koa plus openapi-backend on Quarry's own openapi.yaml and nothing else. It
 * routes and validates every request from the contract exactly as Quarry does (strict, coerced, ajv-formats), and
 * its one handler answers GET /health with the same small body as bare Koa; no auth, limits, store or logging.
 * The gap between it and bare Koa is what the mandated routing and validation cost by themselves. CONTRACT_MODE=lean
 * calls openapi-backend's router and validator directly instead of handleRequest (the floor of any use of it).
 * Run as its own process.
 */
import Koa from 'koa';
import { OpenAPIBackend } from 'openapi-backend';
import { backendOptions, freezeOperations } from '../../src/api/backend.js';

// Quarry's own options (src/api/backend.ts), not strict: this baseline registers one handler, not all 46.
const api = new OpenAPIBackend(backendOptions(false));
api.register({
  getHealth: async () => ({ status: 200, body: { success: true, data: { status: 'ok' } } }),
  notFound: async () => ({ status: 404, body: { success: false } }),
  validationFail: async () => ({ status: 400, body: { success: false } }),
});
await api.init();
freezeOperations(api);

const app = new Koa();
if (process.env.CONTRACT_MODE === 'lean') {
  // The leanest use of openapi-backend: its router and its request validator called directly, no handleRequest.
  app.use(async (ctx) => {
    const request = { method: ctx.method, path: ctx.path, query: ctx.querystring, headers: ctx.headers as Record<string, string> };
    const operation = api.router.matchOperation(request);
    const valid = operation ? api.validator.validateRequest(request, operation).valid : false;
    ctx.status = !operation ? 404 : valid ? 200 : 400;
    ctx.body = valid ? { success: true, data: { status: 'ok' } } : { success: false };
  });
} else {
  app.use(async (ctx) => {
    const result = (await api.handleRequest({ method: ctx.method, path: ctx.path, query: ctx.querystring, headers: ctx.headers as Record<string, string> })) as { status: number; body: unknown };
    ctx.status = result.status;
    ctx.body = result.body;
  });
}
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
