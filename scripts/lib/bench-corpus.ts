/**
 * Where the search benchmarks find the standard corpus (../shared/bench): the generated files and the PostgreSQL
 * database bench:search loads them into. One place, so every script measures the same data.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** gen-corpus.cjs's output (articles.tsv, queries.json), generated once by bench:search. */
export const CORPUS_DIR = join(tmpdir(), 'quarry-bench-corpus');

/** The database holding the corpus as `articles`; BENCH_PG_URL overrides. */
export const benchPgUrl = (): URL => new URL(process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/quarry_bench');
