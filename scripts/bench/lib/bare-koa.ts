/**
 * The baseline of `npm run bench`: Koa answering a small JSON body, nothing else. With BODY_FILE it answers that
 * JSON instead (bench:live-overhead's HTTP floor: a real search answer, without the search). Run as its own process.
 */
import { readFileSync } from 'node:fs';
import Koa from 'koa';

const body: unknown = process.env.BODY_FILE ? JSON.parse(readFileSync(process.env.BODY_FILE, 'utf8')) : { success: true, data: { status: 'ok' } };
const app = new Koa();
app.use((ctx) => {
  ctx.body = body;
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
