/**
 * bench:live-overhead's proxy floor: the least any Node HTTP search API on this stack can do for POST /search. Koa with
 * koa-bodyparser takes the same JSON body, runs the statement Quarry's builder makes for its query (the same SQL the
 * "pg direct" path runs) on a pg Pool of the same size, and answers the rows as JSON. No auth, limits, validation,
 * transaction, merging, snippets or recording: the gap between it and pg direct is the hop through an HTTP process
 * itself, and the gap between it and Quarry is what Quarry's own work costs. Run as its own process; BENCH_PG_URL
 * is the database.
 */
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import pg from 'pg';
import { benchPgUrl } from './bench-corpus.js';
import { benchStatementBuilder } from './bench-statement.js';

const url = benchPgUrl();
const statementFor = await benchStatementBuilder(url);
const pool = new pg.Pool({ connectionString: url.toString(), max: Number(process.env.POOL_SIZE ?? 5) });

const app = new Koa();
app.use(bodyParser());
app.use(async (ctx) => {
  const { query, limit } = ctx.request.body as { query: string; limit: number };
  const statement = statementFor(query, limit);
  const { rows } = await pool.query(statement.sql, statement.params);
  ctx.body = { success: true, data: { status: 'ok', results: rows } };
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
