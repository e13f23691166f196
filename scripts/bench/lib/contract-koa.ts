/**
 * A reference for `npm run bench`: Koa plus openapi-backend on Quarry's own openapi.yaml plus a JWT verified with
 * jose on every request, and nothing else. It routes and validates `GET /api/v1/auth/profile` from the contract
 * exactly as Quarry does (handleRequest, its route table, strict options, coerced, ajv-formats), its bearerJwt security handler
 * verifies the token (HS256, issuer and audience, as Quarry's TokenService), and its handler answers a small body:
 * no session, store, limits or logging. The gap between it and bare Koa is what the mandated contract machinery and
 * a JWT cost by themselves. JWT_SECRET is the HS256 secret the bench signs its token with. Run as its own process.
 */
import Koa from 'koa';
import { jwtVerify } from 'jose';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import { backendOptions } from '../../../src/api/backend.js';
import { useRouteTable } from '../../../src/api/route-table.js';

// As Quarry's TokenService: the secret imported once as an HMAC CryptoKey.
const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(process.env.JWT_SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
// Quarry's own options (src/api/backend.ts), not strict: this reference registers one handler, not all of them.
const api = new OpenAPIBackend(backendOptions(false));
await api.init();
useRouteTable(api);
api.register({
  getProfile: async () => ({ status: 200, body: { success: true, data: { status: 'ok' } } }),
  notFound: async () => ({ status: 404, body: { success: false } }),
  validationFail: async () => ({ status: 400, body: { success: false } }),
  unauthorizedHandler: async () => ({ status: 401, body: { success: false } }),
});
api.registerSecurityHandler('bearerJwt', async (c: Context) => {
  const token = /^Bearer\s+(\S+)$/.exec(String(c.request.headers.authorization ?? ''))?.[1] ?? '';
  const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: 'quarry', audience: 'quarry-api' });
  return payload;
});

const app = new Koa();
app.use(async (ctx) => {
  const result = (await api.handleRequest({
    method: ctx.method,
    path: ctx.path,
    query: ctx.query as Record<string, string | string[]>,
    headers: ctx.headers as Record<string, string | string[]>,
  })) as { status: number; body: unknown };
  ctx.status = result.status;
  ctx.body = result.body;
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
