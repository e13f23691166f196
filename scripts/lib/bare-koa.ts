/** The baseline of `npm run bench`: Koa answering a small JSON body, nothing else. Run as its own process. */
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { success: true, data: { status: 'ok' } };
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
