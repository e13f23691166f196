/**
 * Shared setup of the connector integration suites: server settings from PG_URL / MYSQL_URL, a reachability probe
 * (skip with a message when a server is down, fail under CI=true) and unique table names per run.
 */
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import type { HostPolicy } from '../../src/connectors/host-policy.js';
import type { ConnectionSettings, Engine } from '../../src/connectors/types.js';

export const IN_CI = process.env.CI === 'true';

/** The test servers listen on loopback; production policy would refuse that. */
export const LOOPBACK_POLICY: HostPolicy = { allowlist: [], allowPrivate: false, allowLoopback: true };

export function settingsFromUrl(engine: Exclude<Engine, 'sqlite'>, url: string): ConnectionSettings {
  const parsed = new URL(url);
  return {
    engine,
    host: parsed.hostname,
    port: Number(parsed.port || (engine === 'postgres' ? 5432 : 3306)),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'test',
    username: decodeURIComponent(parsed.username) || null,
    password: parsed.password ? decodeURIComponent(parsed.password) : null,
    ssl: false,
    tables: null,
  };
}

/** True when a TCP connection to host:port opens within a second. */
export function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

export function warnSkipped(suite: string, what: string, hint: string): void {
  if (!IN_CI) console.warn(`[${suite}] ${what} is unreachable: skipping (these tests fail under CI=true). ${hint}`);
}

/** A lowercase, identifier-safe unique name. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** Runs `work` and returns the error it rejects with (fails the test if it resolves). */
export async function rejection(work: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  return work.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (err: { code: string; message: string; details: Record<string, unknown> }) => err,
  );
}

export function elapsedMs(start: number): number {
  return Date.now() - start;
}

/**
 * How a change stream ended, read when a test's wait fails: "running", or its status and, for a failure, the error
 * with its causes (a ConnectorError's cause is the driver's own message).
 */
export function streamEnding(done: Promise<{ status: string; error?: unknown }>): () => string {
  let ended = 'running';
  void done.then((end) => {
    const causes: string[] = [];
    for (let at = end.error; at !== undefined && at !== null && causes.length < 4; at = (at as { cause?: unknown }).cause) causes.push(String(at));
    ended = JSON.stringify({ status: end.status, ...(causes.length > 0 ? { error: causes.join(' <- ') } : {}) });
  });
  return () => ended;
}
