/**
 * `npm run bench:openapi-backend`: where openapi-backend's own time goes in one request, in this process (no HTTP).
 * It builds openapi-backend twice on Quarry's openapi.yaml with Quarry's options, registers no-op handlers and
 * security handlers, and times `handleRequest` for the three GETs the throughput bench measures: once routed by the
 * library's own router (which flattens the definition into a fresh operation list, `router.getOperations()`, and
 * compiles a pattern per path on every `matchOperation`), once by Quarry's RouteTable (the same routes laid out once
 * after `init()`). It prints the cost of `matchOperation` alone with each router, and the operation list's share of a
 * request with the library's.
 *   npx tsx scripts/bench/openapi-backend.ts [calls]
 */
import { OpenAPIBackend } from 'openapi-backend';
import { backendOptions } from '../../src/api/backend.js';
import { useRouteTable } from '../../src/api/route-table.js';

const calls = Number(process.argv[2] ?? 20_000);

async function backend(routeTable: boolean): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend(backendOptions(false));
  await api.init();
  if (routeTable) useRouteTable(api);
  const answer = async () => ({ status: 200 });
  api.register({ getProfile: answer, getSearchHistory: answer, getRateLimitStatus: answer, notFound: answer, validationFail: answer });
  api.registerSecurityHandler('bearerJwt', async () => ({ caller: 'user' }));
  api.registerSecurityHandler('apiKey', async () => ({ caller: 'key' }));
  return api;
}
const library = await backend(false);
const table = await backend(true);

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

const list = await perCall(() => library.router.getOperations());
console.log(`library router.getOperations(): ${list.toFixed(1)} us per call (${library.router.getOperations().length} operations on ${Object.keys(library.definition.paths ?? {}).length} paths)`);
for (const request of requests) {
  const call = () => ({ ...request, query: { ...request.query }, headers });
  const libraryMatch = await perCall(() => library.router.matchOperation(call(), true));
  const tableMatch = await perCall(() => table.router.matchOperation(call(), true));
  const libraryWhole = await perCall(() => library.handleRequest(call()));
  const tableWhole = await perCall(() => table.handleRequest(call()));
  console.log(
    `${request.method} ${request.path}: matchOperation ${libraryMatch.toFixed(1)} us (library) / ${tableMatch.toFixed(1)} us (RouteTable); ` +
      `handleRequest ${libraryWhole.toFixed(1)} us (library, ${(100 * list / libraryWhole).toFixed(0)}% of it one operation list) / ` +
      `${tableWhole.toFixed(1)} us (RouteTable), ${(libraryWhole / tableWhole).toFixed(2)} x faster`,
  );
}
