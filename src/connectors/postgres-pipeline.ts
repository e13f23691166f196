/**
 * A read-only transaction in one round trip. The extended query protocol lets several Parse/Bind/Execute groups
 * share one Sync: the server runs them in order and answers once. So `BEGIN READ ONLY`, `SET LOCAL
 * statement_timeout`, the statement and `COMMIT` go out in one write and come back in one answer. A failing group
 * makes the server skip the rest up to the Sync: the statement never runs outside the read-only transaction, and
 * after a failure the transaction is left open (aborted) for the caller's ROLLBACK.
 *
 * Ending the transaction in the same round trip matters beyond the round trip it saves: the connection is free the
 * moment the rows are in, so the pool hands the next search the same, warm server process. A COMMIT sent afterwards
 * kept the connection busy, and each search took a different, cold backend.
 *
 * It extends pg's Query (pg 8: `prepare(connection)` sends the statement's Parse/Bind/Describe, then `_getRows`
 * its Execute and Sync); the integration tests (connectors-postgres) check the transaction, the timeout and the
 * rows on a real server.
 */
import pg from 'pg';

interface WireConnection {
  parse(message: { text: string; name?: string; types?: unknown[] }): void;
  bind(message: { portal?: string; statement?: string; values?: unknown[] }): void;
  execute(message: { portal?: string; rows?: number }): void;
}

interface QueryInternals {
  prepare(connection: WireConnection): void;
  _getRows(connection: WireConnection & { sync(): void }, rows?: number): void;
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

  /**
   * The statement's Execute, then COMMIT, then the one Sync. pg calls this once, since the statement never sets
   * `rows` (reading a portal page by page): every row comes back in the one answer.
   */
  override _getRows(connection: WireConnection & { sync(): void }): void {
    connection.execute({ portal: '' });
    connection.parse({ text: 'COMMIT', name: '', types: [] });
    connection.bind({ portal: '', statement: '', values: [] });
    connection.execute({ portal: '' });
    connection.sync();
  }
}

/** Results in the order sent: BEGIN, SET, the statement, COMMIT. */
const STATEMENT_RESULT = 2;

/**
 * Runs `sql` in a read-only transaction with a statement timeout (whole milliseconds, at least 1) and commits it;
 * resolves with the statement's rows. On rejection the transaction may still be open: the caller rolls it back.
 */
export function queryInReadOnlyTransaction<Row>(client: pg.PoolClient, sql: string, params: unknown[], timeoutMs: number): Promise<Row[]> {
  return new Promise<Row[]>((resolve, reject) => {
    const statement = new ReadOnlyStatement(sql, params, timeoutMs, (error, results) => {
      if (error) return reject(error);
      const all = Array.isArray(results) ? results : [results];
      resolve((all[STATEMENT_RESULT]?.rows ?? []) as Row[]);
    });
    client.query(statement);
  });
}
