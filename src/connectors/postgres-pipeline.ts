/**
 * A read-only statement in one round trip. The extended query protocol lets several Parse/Bind/Execute groups share
 * one Sync: the server runs them in order and answers once. So `BEGIN READ ONLY`, `SET LOCAL statement_timeout` and
 * the statement go out in one write, where sending the BEGIN first and waiting for it cost a round trip per search.
 * A failing group makes the server skip the rest up to the Sync, so the statement never runs outside the read-only
 * transaction. The COMMIT (or ROLLBACK) is the caller's, as before.
 *
 * It extends pg's Query (pg 8: `prepare(connection)` sends the statement's own Parse/Bind/Describe/Execute/Sync);
 * the integration tests (connectors-postgres) check the transaction, the timeout and the rows on a real server.
 */
import pg from 'pg';

interface WireConnection {
  parse(message: { text: string; name?: string; types?: unknown[] }): void;
  bind(message: { portal?: string; statement?: string; values?: unknown[] }): void;
  execute(message: { portal?: string; rows?: number }): void;
}

interface QueryInternals {
  prepare(connection: WireConnection): void;
}

type QueryCallback = (error: Error | null, results: pg.QueryResult | pg.QueryResult[]) => void;
type QueryConstructor = new (config: pg.QueryConfig & { queryMode: 'extended' }, values: undefined, callback: QueryCallback) => QueryInternals & pg.Submittable;

const BaseQuery = pg.Query as unknown as QueryConstructor;

class ReadOnlyStatement extends BaseQuery {
  constructor(sql: string, params: unknown[], private readonly timeoutMs: number, callback: QueryCallback) {
    super({ text: sql, values: params, queryMode: 'extended' }, undefined, callback);
  }

  override prepare(connection: WireConnection): void {
    for (const text of ['BEGIN READ ONLY', `SET LOCAL statement_timeout = ${this.timeoutMs}`]) {
      connection.parse({ text, name: '', types: [] });
      connection.bind({ portal: '', statement: '', values: [] });
      connection.execute({ portal: '' });
    }
    super.prepare(connection);
  }
}

/**
 * Opens a read-only transaction with a statement timeout (whole milliseconds, at least 1) and runs `sql` in it;
 * resolves with the statement's rows.
 */
export function queryInReadOnlyTransaction<Row>(client: pg.PoolClient, sql: string, params: unknown[], timeoutMs: number): Promise<Row[]> {
  return new Promise<Row[]>((resolve, reject) => {
    const statement = new ReadOnlyStatement(sql, params, timeoutMs, (error, results) => {
      if (error) return reject(error);
      // One result per command: BEGIN, SET, then the statement's.
      const all = Array.isArray(results) ? results : [results];
      resolve((all[all.length - 1]?.rows ?? []) as Row[]);
    });
    client.query(statement);
  });
}
