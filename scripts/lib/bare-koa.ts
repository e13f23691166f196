/**
 * The baseline of `npm run bench`: Koa answering a small JSON body, nothing else. With BODY_FILE it answers that
 * JSON instead (bench:live-overhead's HTTP floor: a real search answer, without the search). With QUARRY_SHAPE=1 it answers
 * as Quarry's key requests do (X-Request-Id, the five X-RateLimit-* headers, the success envelope with its meta)
 * with no work behind it: the floor of any server that keeps the contract's response shape. With BATCHING=1 it
 * writes its responses as Quarry does by default (src/http/response-batching.ts), to show what that alone is worth.
 * Run as its own process.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Koa from 'koa';
import { responseBatching } from '../../src/http/response-batching.js';

const body: unknown = process.env.BODY_FILE ? JSON.parse(readFileSync(process.env.BODY_FILE, 'utf8')) : { success: true, data: { status: 'ok' } };
const app = new Koa();
if (process.env.BATCHING === '1') app.use(responseBatching());
if (process.env.QUARRY_SHAPE === '1') {
  app.use((ctx) => {
    const requestId = randomUUID();
    ctx.set('X-Request-Id', requestId);
    ctx.set({ 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '999', 'X-RateLimit-Reset': new Date(Date.now() + 3_600_000).toISOString(), 'X-RateLimit-Tier': 'free', 'X-RateLimit-Window': '3600' });
    ctx.body = { success: true, data: { total: 0, limit: 1, offset: 0, searches: [] }, meta: { timestamp: new Date().toISOString(), requestId, version: '1.0.0' } };
  });
} else {
  app.use((ctx) => {
    ctx.body = body;
  });
}
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
