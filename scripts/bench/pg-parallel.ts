/**
 * Why bench:live-overhead's database plans without parallel workers: the common-word statement Quarry builds (the one
 * bench:live-overhead's "pg direct" path runs), run directly with pg, with PostgreSQL's default of two workers per query and
 * with none. Each setting runs the same queries in back-to-back pairs through two sessions, in alternating order, as
 * bench:live-overhead does, and the two settings take turns query by query, so both see the machine at the same moments. It
 * prints the median query time and the spread of the pair differences (median absolute deviation), which is what
 * bench:live-overhead's intervals are made of. Needs the corpus loaded by bench:live-overhead.
 *   npx tsx scripts/bench/pg-parallel.ts [pairs per setting, default 160]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { benchPgUrl, CORPUS_DIR } from './lib/bench-corpus.js';
import { benchStatementBuilder } from './lib/bench-statement.js';
import { median } from './lib/stats.js';

const pairs = Number(process.argv[2] ?? 160);
if (!Number.isInteger(pairs) || pairs < 10) {
  console.error('usage: npx tsx scripts/bench/pg-parallel.ts [pairs per setting, a whole number >= 10]');
  process.exit(2);
}
const url = benchPgUrl();
const queries = JSON.parse(readFileSync(join(CORPUS_DIR, 'queries.json'), 'utf8')).common200 as string[];
const statementFor = await benchStatementBuilder(url);

const medianAbsoluteDeviation = (values: number[]) => {
  const centre = median(values);
  return median(values.map((v) => Math.abs(v - centre)));
};

interface Setting {
  workers: number;
  /** Two single-session pools, so each pair's second run is a different session, as in bench:live-overhead. */
  sessions: pg.Pool[];
  times: number[];
  differences: number[];
}
const settings: Setting[] = [];
for (const workers of [2, 0]) {
  const sessions = [0, 1].map(() => new pg.Pool({ connectionString: url.toString(), max: 1 }));
  for (const session of sessions) await session.query(`SET max_parallel_workers_per_gather = ${workers}`);
  settings.push({ workers, sessions, times: [], differences: [] });
}

/** One pair: the query twice back to back, through the setting's two sessions in the given order. */
async function pair(setting: Setting, sql: string, params: unknown[], flipped: boolean): Promise<void> {
  const [first, second] = flipped ? [setting.sessions[1]!, setting.sessions[0]!] : setting.sessions;
  const t0 = performance.now();
  await first!.query(sql, params);
  const t1 = performance.now();
  await second!.query(sql, params);
  const t2 = performance.now();
  setting.times.push(t1 - t0, t2 - t1);
  setting.differences.push(t2 - t1 - (t1 - t0));
}

// Both settings on each query in turn, the one first that went second last time, so both see the same machine.
for (let i = 0; i < pairs; i++) {
  const { sql, params } = statementFor(queries[i % queries.length]!, 20);
  const order = i % 2 === 0 ? settings : [...settings].reverse();
  for (const setting of order) await pair(setting, sql, params, Math.floor(i / 2) % 2 === 1);
}
for (const { workers, sessions, times, differences } of settings) {
  await Promise.all(sessions.map((session) => session.end()));
  console.log(
    `max_parallel_workers_per_gather = ${workers}: ${pairs} pairs of common words, median query ${median(times).toFixed(1)} ms, ` +
      `median absolute deviation of the pair differences ${medianAbsoluteDeviation(differences).toFixed(2)} ms`,
  );
}
