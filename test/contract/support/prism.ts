import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './contract.js';

/** Prism's CLI entry, run with this Node directly (no shell, no `env node` wrapper). */
const prismCli = fileURLToPath(new URL('../../../node_modules/@stoplight/prism-cli/dist/index.js', import.meta.url));

export interface PrismProcess {
  url: string;
  /** The watchdog's pid; Prism is its only child. */
  pid: number;
  /** Prism's recent log lines, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** A port nobody listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.setTimeout(1_000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });

/**
 * A tiny parent for Prism that ends it when the test worker goes away by any means: a clean stop (SIGTERM), Ctrl-C,
 * or a worker that is killed outright, which closes the watchdog's stdin. So no Prism outlives its test file.
 */
const watchdog = `
const { spawn } = require('node:child_process');
const prism = spawn(process.execPath, process.argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  prism.kill('SIGTERM');
  setTimeout(() => prism.kill('SIGKILL'), 3000).unref();
};
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
prism.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`;

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

const isAlive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

async function stopChild(child: ChildProcess): Promise<void> {
  if (isAlive(child)) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 8_000);
    await exited;
    clearTimeout(timer);
  }
  running.delete(child);
}

/**
 * Starts `prism <args> --host 127.0.0.1 --port <free port>` from the repository root and resolves once the port
 * accepts connections (Prism binds only after it has loaded and validated the document). A port lost to a race,
 * or an early exit, is retried on a new port; the last failure carries Prism's own output.
 */
export async function startPrism(args: string[], { attempts = 3, timeoutMs = 30_000 } = {}): Promise<PrismProcess> {
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const port = await freePort();
    let log = '';
    const child = spawn(process.execPath, ['-e', watchdog, prismCli, ...args, '--host', '127.0.0.1', '--port', String(port), '--no-multiprocess'], {
      cwd: repoRoot,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_ENV: 'test', FORCE_COLOR: '0', NO_COLOR: '1' },
    });
    running.add(child);
    const append = (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-64_000);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    const prism: PrismProcess = {
      url: `http://127.0.0.1:${port}`,
      pid: child.pid ?? -1,
      output: () => log,
      stop: () => stopChild(child),
    };
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && isAlive(child)) {
      if (await canConnect(port)) {
        // Someone else may have taken the port in the meantime: then Prism exits with EADDRINUSE right away.
        await sleep(250);
        if (isAlive(child)) return prism;
        break;
      }
      await sleep(150);
    }
    await stopChild(child);
    lastError = new Error(`prism ${args.join(' ')} did not start on port ${port} (exit ${child.exitCode ?? child.signalCode ?? 'timeout'}):\n${log}`);
  }
  throw lastError;
}
