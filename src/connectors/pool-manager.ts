/**
 * One pool per connection id (issue 5): created on first use, reused by every request, closed when the connection
 * is updated or deleted (`close`), when it has been idle for `idleCloseMs`, and at shutdown (`closeAll`).
 * getDatabaseStatus reads `stats(id)`.
 */
import { createHash } from 'node:crypto';
import { createExecutor, DIALECTS, type ExecutorOptions } from './executor.js';
import type { ConnectionSettings, PooledExecutor, PoolStats, QueryOptions, SqlExecutor } from './types.js';

export interface PoolManagerOptions extends ExecutorOptions {
  /** Close a pool nobody used for this long (default 5 minutes). */
  idleCloseMs?: number;
  /** Executor factory override (tests). */
  createExecutor?: (settings: ConnectionSettings, options: ExecutorOptions) => Promise<PooledExecutor>;
}

interface Entry {
  fingerprint: string;
  /** What callers get: the same object for every request on this id. */
  facade: SqlExecutor;
  opening: Promise<PooledExecutor>;
  executor: PooledExecutor | null;
  lastUsed: number;
  active: number;
}

const DEFAULT_IDLE_CLOSE_MS = 5 * 60_000;

const fingerprints = new WeakMap<ConnectionSettings, string>();

/**
 * Settings identity without keeping a second copy of the password in memory. Settings objects are never changed once
 * made (DatabaseService keeps one per record), so each is hashed once.
 */
function fingerprint(settings: ConnectionSettings): string {
  let print = fingerprints.get(settings);
  if (print === undefined) {
    print = createHash('sha256').update(JSON.stringify(settings)).digest('base64url');
    fingerprints.set(settings, print);
  }
  return print;
}

export class PoolManager {
  private readonly entries = new Map<string, Entry>();
  private readonly idleCloseMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: PoolManagerOptions) {
    this.idleCloseMs = options.idleCloseMs ?? DEFAULT_IDLE_CLOSE_MS;
    this.sweeper = setInterval(() => void this.closeIdle(), Math.max(10, Math.min(this.idleCloseMs / 2, 60_000)));
    this.sweeper.unref();
  }

  /**
   * The executor of connection `id`, opening its pool on first use. Settings that differ from the open pool's
   * (a missed `close` after an update) replace it. Rejects with HOST_NOT_ALLOWED before any connection attempt.
   */
  async get(id: string, settings: ConnectionSettings): Promise<SqlExecutor> {
    const print = fingerprint(settings);
    let entry = this.entries.get(id);
    if (entry && entry.fingerprint !== print) {
      await this.close(id);
      entry = undefined;
    }
    if (!entry) entry = this.open(id, settings, print);
    await entry.opening;
    return entry.facade;
  }

  /** Pool counters of connection `id`, or null when no pool is open for it. */
  stats(id: string): PoolStats | null {
    return this.entries.get(id)?.executor?.stats() ?? null;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** Closes the pool of `id` (connection updated or deleted). */
  async close(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    const executor = await entry.opening.catch(() => null);
    await executor?.close().catch(() => undefined);
  }

  /** Closes every pool; for shutdown. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.entries.keys()].map((id) => this.close(id)));
  }

  /** Closes pools with no query running and none started for `idleCloseMs`. */
  async closeIdle(now = Date.now()): Promise<void> {
    const idle = [...this.entries].filter(([, e]) => e.executor && e.active === 0 && now - e.lastUsed >= this.idleCloseMs);
    await Promise.all(idle.map(([id]) => this.close(id)));
  }

  private open(id: string, settings: ConnectionSettings, print: string): Entry {
    const factory = this.options.createExecutor ?? createExecutor;
    const opening = factory(settings, this.options);
    const entry: Entry = {
      fingerprint: print,
      opening,
      executor: null,
      lastUsed: Date.now(),
      active: 0,
      facade: {
        engine: settings.engine,
        quoteIdent: DIALECTS[settings.engine].quoteIdent,
        placeholder: DIALECTS[settings.engine].placeholder,
        query: async <Row>(sql: string, params: unknown[], options: QueryOptions): Promise<Row[]> => {
          entry.active++;
          entry.lastUsed = Date.now();
          try {
            const executor = await entry.opening;
            return await executor.query<Row>(sql, params, options);
          } finally {
            entry.active--;
            entry.lastUsed = Date.now();
          }
        },
      },
    };
    this.entries.set(id, entry);
    opening.then(
      (executor) => {
        entry.executor = executor;
      },
      () => {
        if (this.entries.get(id) === entry) this.entries.delete(id);
      },
    );
    return entry;
  }
}
