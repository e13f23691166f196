/**
 * `npm run bench:openapi-backend`: where openapi-backend's own time goes in one request, in this process (no HTTP).
 * It builds openapi-backend on Quarry's openapi.yaml with Quarry's options, registers no-op handlers and security
 * handlers, and times `handleRequest` for three GETs the throughput bench measures, against the one step of it that
 * does not depend on the request: the router's flat list of operations (`router.getOperations()`, which
 * `matchOperation` builds again on every call). The share of that step is what a memoised operation list in
 * openapi-backend would save each request.
 *   npx tsx scripts/bench-openapi-backend.ts [calls]
 */
import { OpenAPIBackend } from 'openapi-backend';
import { backendOptions } from '../src/api/backend.js';

const calls = Number(process.argv[2] ?? 20_000);
const api = new OpenAPIBackend(backendOptions(false));
await api.init();
const answer = async () => ({ status: 200 });
api.register({ getProfile: answer, getSearchHistory: answer, getRateLimitStatus: answer, notFound: answer, validationFail: answer });
api.registerSecurityHandler('bearerJwt', async () => ({ caller: 'user' }));
api.registerSecurityHandler('apiKey', async () => ({ caller: 'key' }));

const headers = { host: '127.0.0.1:3000', authorization: 'Bearer x', 'user-agent': 'autocannon', connection: 'keep-alive' };
const requests: Array<{ method: string; path: string; query: Record<string, string> }> = [
  { method: 'GET', path: '/api/v1/rate-limit/status', query: {} },
  { method: 'GET', path: '/api/v1/search/history', query: { limit: '1' } },
  { method: 'GET', path: '/api/v1/auth/profile', query: {} },
];

/** Microseconds per call of `run`, after a warm-up of a tenth as many calls. */
async function perCall(run: () => unknown): Promise<number> {
  for (let i = 0; i < calls / 10; i++) await run();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await run();
  return ((performance.now() - started) * 1000) / calls;
}

const list = await perCall(() => api.router.getOperations());
console.log(`router.getOperations(): ${list.toFixed(1)} us per call (${api.router.getOperations().length} operations on ${Object.keys(api.definition.paths ?? {}).length} paths)`);
for (const request of requests) {
  const whole = await perCall(() => api.handleRequest({ ...request, query: { ...request.query }, headers }));
  console.log(`${request.method} ${request.path}: handleRequest ${whole.toFixed(1)} us per call, of which the operation list ${(100 * list / whole).toFixed(0)}%`);
}
