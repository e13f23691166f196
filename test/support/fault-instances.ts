/**
 * Private, disposable dependencies for fault tests: a Redis server, a PostgreSQL cluster and a TCP server that
 * never answers, each on its own free port, so a test can stop them without touching the shared services.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/spawn-server.js';

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

async function portAnswers(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** Kills the server (SIGKILL: an abrupt outage). */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  cleanup(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' });
    await waitFor(() => portAnswers(port), `private redis on ${port}`);
  };
  const kill = async () => {
    const current = child;
    child = null;
    if (!current) return;
    current.kill('SIGKILL');
    await exited(current);
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, kill, cleanup: kill };
}

export interface PrivatePostgres {
  /** Admin URL of the `postgres` database (user postgres, trust auth over 127.0.0.1). */
  url: string;
  port: number;
  urlFor(database: string): string;
  /** Stops the cluster (pg_ctl -m fast: every client is disconnected at once). */
  stop(): Promise<void>;
  start(): Promise<void>;
  cleanup(): Promise<void>;
}

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A fresh PostgreSQL cluster in a temp dir, run as the `postgres` OS user (PostgreSQL refuses root). */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'quarry-fault-pg-'));
  chmodSync(dir, 0o700);
  const asRoot = process.getuid?.() === 0;
  const data = join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const runSync = (bin: string, args: string[]) =>
    asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', join(PG_BIN, bin), ...args], { stdio: 'pipe' }) : execFileSync(join(PG_BIN, bin), args, { stdio: 'pipe' });
  runSync('initdb', ['-D', data, '--auth=trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  let running = false;
  const start = async () => {
    // pg_ctl daemonizes the postmaster and waits until it accepts connections.
    runSync('pg_ctl', ['-D', data, '-w', '-t', '30', '-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`, 'start']);
    running = true;
  };
  const stop = async () => {
    if (!running) return;
    running = false;
    // "fast": every client connection is terminated at once.
    runSync('pg_ctl', ['-D', data, '-w', '-t', '30', '-m', 'fast', 'stop']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start,
    stop,
    cleanup: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function onPrivatePostgres(url: string, statements: string[]): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface SilentServer {
  port: number;
  close(): Promise<void>;
}

/** Accepts TCP connections and never answers (a hung database). */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface HangingProxy {
  port: number;
  /**
   * From now on: connections are accepted and never answered; open ones stop carrying data both ways, and a close
   * from Quarry's side is never answered either (as from a server that was stopped with SIGSTOP or black-holed).
   */
  hang(): void;
  /** Forwards again (new connections; connections opened while hung stay dead). */
  resume(): void;
  /**
   * Connections the client holds open to the target right now (from accept until the client closes its side), and
   * the most at once since the last `resetPeak`.
   */
  open(): number;
  peak(): number;
  resetPeak(): void;
  close(): Promise<void>;
}

/** A TCP proxy to 127.0.0.1:`targetPort` that can be made to hang, so a database can be connected healthy first. */
export async function startHangingProxy(targetPort: number): Promise<HangingProxy> {
  const { connect } = await import('node:net');
  const sockets = new Set<Socket>();
  const held = new Set<Socket>();
  let peak = 0;
  let hung = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  // Half-open sockets: an end from either side is passed on only while forwarding, never once hung.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    track(client);
    held.add(client);
    peak = Math.max(peak, held.size);
    client.on('end', () => held.delete(client));
    client.on('close', () => held.delete(client));
    if (hung) return; // accepted, never answered
    const upstream = connect({ port: targetPort, host: '127.0.0.1', allowHalfOpen: true });
    track(upstream);
    client.on('end', () => void (hung || upstream.end()));
    upstream.on('end', () => void (hung || client.end()));
    client.on('data', (chunk) => void (hung || upstream.write(chunk)));
    upstream.on('data', (chunk) => void (hung || client.write(chunk)));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    hang: () => void (hung = true),
    resume: () => void (hung = false),
    open: () => held.size,
    peak: () => peak,
    resetPeak: () => void (peak = held.size),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
