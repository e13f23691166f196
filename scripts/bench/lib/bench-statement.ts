import { createExecutor, DIALECTS } from '../../../src/connectors/index.js';
import { compileQuery } from '../../../src/search-core/query.js';
import { tableQueries } from '../../../src/sql-search/queries.js';
import { loadSearchSchema } from '../../../src/sql-search/schema-catalog.js';
import { chooseTargets } from '../../../src/sql-search/targets.js';
import type { Statement } from '../../../src/sql-search/types.js';

/**
 * bench:live-overhead's "pg direct" statement: what Quarry's builder makes for a natural-mode query on the bench corpus's
 * `articles` table, from the same discovery Quarry runs (so the planner sees the same GIN expression). Shared by
 * the benchmark and its proxy floor, so both run exactly the SQL Quarry runs.
 */
export async function benchStatementBuilder(url: URL): Promise<(text: string, limit: number) => Statement> {
  const executor = await createExecutor(
    { engine: 'postgres', host: url.hostname, port: Number(url.port || 5432), database: url.pathname.slice(1), username: decodeURIComponent(url.username || 'postgres'), password: decodeURIComponent(url.password), ssl: false, tables: null },
    { hostPolicy: { allowlist: [], allowPrivate: true, allowLoopback: true } },
  );
  const schema = await loadSearchSchema(executor, ['articles'], 10_000).finally(() => executor.close());
  const [target] = chooseTargets(schema, {});
  if (!target?.index) throw new Error('articles has no usable full-text index');
  return (text, limit) => tableQueries(target, compileQuery(text, 'natural').query, DIALECTS.postgres)!.rank(limit, { from: 0, to: limit });
}
