/**
 * One pool per connection id: created on first use, reused by every request, closed when the connection
 * is updated or deleted (`close`), when it has been idle for `idleCloseMs`, and at shutdown (`closeAll`).
 * getDatabaseStatus reads `stats(id)`.
 *
 * Bounded: a pool may open up to its `max` connections, so each open pool counts that many against
 * its database server (`maxPerHost`, by host and port as the connection names them) and against all servers together
 * (`maxTotal`). A pool that does not fit closes idle pools, the least recently used first; when none is idle it
 * waits for one until `connectTimeoutMs`, then fails with DATABASE_TIMEOUT. Forty connections to one server
 * therefore never hold more than `maxPerHost` sockets to it, however many databases one search reads.
 */
import { createHash } from 'node:crypto';
import { ConnectorError } from './errors.js';
import type { ClientConfig } from 'pg';
import { createExecutor, DEFAULT_PORTS, DIALECTS, type ExecutorOptions } from './executor.js';
import { resolveAllowedHost } from './host-policy.js';
import { replicationClientConfig } from './postgres.js';
import type { ConnectionSettings, PooledExecutor, PoolStats, QueryOptions, SqlExecutor } from './types.js';
import { DEFAULT_POOL_OPTIONS } from './types.js';

export interface PoolManagerOptions extends ExecutorOptions {
  /** Close a pool nobody used for this long (default 5 minutes). */
  idleCloseMs?: number;
  /** Most connections held to one database server, over all its pools (default 20). */
  maxPerHost?: number;
  /** Most connections held over all pools (default 200). */
  maxTotal?: number;
  /** Executor factory override (tests). */
  createExecutor?: (settings: ConnectionSettings, options: ExecutorOptions) => Promise<PooledExecutor>;
}

interface Entry {
  fingerprint: string;
  /** `host:port` of a server engine; null for SQLite (a local file, no server to exhaust). */
  host: string | null;
  /** Connections this pool may open, counted against its host and the total while it is open. */
  size: number;
  /** What callers get: the same object for every request on this id while the pool is open. */
  facade: SqlExecutor;
  opening: Promise<PooledExecutor>;
  executor: PooledExecutor | null;
  lastUsed: number;
  active: number;
  /** Its size is counted (between a successful reservation and the end of its close). */
  counted: boolean;
  /**
   * Closed to make room or for idleness, not because its connection changed: its facade opens the pool again when
   * used, unless the connection has been closed for good since (its id's generation moved on).
   */
  evicted: boolean;
  generation: number;
}

const DEFAULT_IDLE_CLOSE_MS = 5 * 60_000;
export const DEFAULT_MAX_PER_HOST = 20;
export const DEFAULT_MAX_TOTAL = 200;

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

function hostOf(settings: ConnectionSettings): string | null {
  if (settings.engine === 'sqlite') return null;
  return `${(settings.host ?? '').toLowerCase()}:${settings.port ?? ''}`;
}

export class PoolManager {
  private readonly entries = new Map<string, Entry>();
  private readonly idleCloseMs: number;
  private readonly maxPerHost: number;
  private readonly maxTotal: number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly heldByHost = new Map<string, number>();
  private heldTotal = 0;
  /** Pools waiting for room: told whenever a pool closes or goes idle. */
  private readonly waiters = new Set<() => void>();
  /** How often each id was closed for good (updated or deleted): executors of an earlier generation stay closed. */
  private readonly generations = new Map<string, number>();

  constructor(private readonly options: PoolManagerOptions) {
    this.idleCloseMs = options.idleCloseMs ?? DEFAULT_IDLE_CLOSE_MS;
    this.maxPerHost = options.maxPerHost ?? DEFAULT_MAX_PER_HOST;
    this.maxTotal = options.maxTotal ?? DEFAULT_MAX_TOTAL;
    this.sweeper = setInterval(() => void this.closeIdle(), Math.max(10, Math.min(this.idleCloseMs / 2, 60_000)));
    this.sweeper.unref();
  }

  /**
   * The executor of connection `id`, opening its pool on first use. Settings that differ from the open pool's
   * (a missed `close` after an update) replace it. Rejects with HOST_NOT_ALLOWED before any connection attempt, and
   * with DATABASE_TIMEOUT when no room for the pool is free within the connect timeout.
   */
  async get(id: string, settings: ConnectionSettings): Promise<SqlExecutor> {
    return (await this.live(id, settings)).facade;
  }

  /** Pool counters of connection `id`, or null when no pool is open for it. */
  stats(id: string): PoolStats | null {
    return this.entries.get(id)?.executor?.stats() ?? null;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** Connections the open pools may hold, per server and in all (tests, status). */
  held(): { total: number; byHost: Record<string, number> } {
    return { total: this.heldTotal, byHost: Object.fromEntries(this.heldByHost) };
  }

  /** Closes the pool of `id` for good (connection updated or deleted): executors handed out for it stay closed. */
  async close(id: string): Promise<void> {
    this.generations.set(id, (this.generations.get(id) ?? 0) + 1);
    await this.shut(id);
  }

  /** Closes the pool of `id`; executors handed out for it open it again when used (room, idleness). */
  private async evict(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.evicted = true;
    await this.shut(id);
  }

  private async shut(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    const executor = await entry.opening.catch(() => null);
    await executor?.close().catch(() => undefined);
    this.release(entry);
  }

  /** Closes every pool; for shutdown. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.entries.keys()].map((id) => this.close(id)));
  }

  /** Closes pools with no query running and none started for `idleCloseMs`. */
  async closeIdle(now = Date.now()): Promise<void> {
    const idle = [...this.entries].filter(([, e]) => e.executor && e.active === 0 && now - e.lastUsed >= this.idleCloseMs);
    await Promise.all(idle.map(([id]) => this.evict(id)));
  }

  /** The open (or opening) pool of `id` with these settings, opened when there is none. */
  private async live(id: string, settings: ConnectionSettings): Promise<Entry> {
    const print = fingerprint(settings);
    let entry = this.entries.get(id);
    if (entry && entry.fingerprint !== print) {
      await this.close(id);
      entry = undefined;
    }
    entry ??= this.entries.get(id) ?? this.open(id, settings, print);
    entry.lastUsed = Date.now();
    await entry.opening;
    return entry;
  }

  /**
   * Settings for a replication connection of these settings (PostgreSQL's logical replication, or a MySQL/MariaDB
   * binary log reader, which takes them over), checked by the same host policy.
   */
  async replicationConfig(settings: ConnectionSettings): Promise<ClientConfig> {
    const port = settings.port ?? (settings.engine === 'mysql' ? DEFAULT_PORTS.mysql : DEFAULT_PORTS.postgres);
    return replicationClientConfig(settings, await resolveAllowedHost(settings.host ?? '', port, this.options.hostPolicy, this.options.lookup));
  }

  private open(id: string, settings: ConnectionSettings, print: string): Entry {
    const factory = this.options.createExecutor ?? createExecutor;
    const host = hostOf(settings);
    const max = this.options.max ?? DEFAULT_POOL_OPTIONS.max;
    const size = Math.max(1, Math.min(max, host === null ? max : this.maxPerHost, this.maxTotal));
    const entry: Entry = {
      fingerprint: print,
      host,
      size,
      opening: Promise.resolve(null as never),
      executor: null,
      lastUsed: Date.now(),
      active: 0,
      counted: false,
      evicted: false,
      generation: this.generations.get(id) ?? 0,
      facade: {
        engine: settings.engine,
        quoteIdent: DIALECTS[settings.engine].quoteIdent,
        placeholder: DIALECTS[settings.engine].placeholder,
        query: async <Row>(sql: string, params: unknown[], options: QueryOptions): Promise<Row[]> => {
          // Evicted to make room since it was handed out: the query opens the pool again (and waits for room).
          // A pool closed because its connection changed or went is not reopened: the query fails as closed.
          let current = entry;
          if (entry.evicted && entry.generation === (this.generations.get(id) ?? 0)) {
            const now = this.entries.get(id);
            if (!now || now.fingerprint === entry.fingerprint) current = await this.live(id, settings);
          }
          current.active++;
          current.lastUsed = Date.now();
          try {
            const executor = await current.opening;
            return await executor.query<Row>(sql, params, options);
          } finally {
            current.active--;
            current.lastUsed = Date.now();
            if (current.active === 0) this.wake();
          }
        },
      },
    };
    entry.opening = this.reserve(entry, settings).then(() => factory(settings, { ...this.options, max: size }));
    this.entries.set(id, entry);
    entry.opening.then(
      (executor) => {
        entry.executor = executor;
      },
      () => {
        if (this.entries.get(id) === entry) this.entries.delete(id);
        this.release(entry);
      },
    );
    return entry;
  }

  /** Counts the pool's size against its host and the total, closing idle pools or waiting until it fits. */
  private async reserve(entry: Entry, settings: ConnectionSettings): Promise<void> {
    const deadline = Date.now() + (this.options.connectTimeoutMs ?? DEFAULT_POOL_OPTIONS.connectTimeoutMs);
    for (;;) {
      const hostFull = entry.host !== null && (this.heldByHost.get(entry.host) ?? 0) + entry.size > this.maxPerHost;
      const totalFull = this.heldTotal + entry.size > this.maxTotal;
      if (!hostFull && !totalFull) {
        entry.counted = true;
        this.heldTotal += entry.size;
        if (entry.host !== null) this.heldByHost.set(entry.host, (this.heldByHost.get(entry.host) ?? 0) + entry.size);
        return;
      }
      const victim = this.leastRecentlyUsedIdle(entry, hostFull ? entry.host : null);
      if (victim) {
        await this.evict(victim);
        continue;
      }
      if (!(await this.roomBefore(deadline))) {
        const bound = hostFull ? `${this.maxPerHost} to one database server` : `${this.maxTotal} in all`;
        throw new ConnectorError('DATABASE_TIMEOUT', `No connection was free within the connect timeout: Quarry holds at most ${bound}, and all are in use.`, {
          engine: settings.engine, reason: hostFull ? 'host_connections' : 'total_connections',
        });
      }
    }
  }

  /** The idle open pool (of `host`, when given) used longest ago, other than `self`. */
  private leastRecentlyUsedIdle(self: Entry, host: string | null): string | null {
    let best: [string, Entry] | null = null;
    for (const candidate of this.entries) {
      const [, entry] = candidate;
      if (entry === self || !entry.counted || !entry.executor || entry.active > 0) continue;
      if (host !== null && entry.host !== host) continue;
      if (!best || entry.lastUsed < best[1].lastUsed) best = candidate;
    }
    return best?.[0] ?? null;
  }

  /** Resolves true when a pool closes or goes idle, false at the deadline. */
  private roomBefore(deadline: number): Promise<boolean> {
    const wait = deadline - Date.now();
    if (wait <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (room: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve(room);
      };
      const waiter = () => done(true);
      const timer = setTimeout(() => done(false), wait);
      timer.unref();
      this.waiters.add(waiter);
    });
  }

  private release(entry: Entry): void {
    if (!entry.counted) return;
    entry.counted = false;
    this.heldTotal -= entry.size;
    if (entry.host !== null) {
      const left = (this.heldByHost.get(entry.host) ?? 0) - entry.size;
      if (left > 0) this.heldByHost.set(entry.host, left);
      else this.heldByHost.delete(entry.host);
    }
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
