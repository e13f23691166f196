import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts Quarry as its own OS process (tests: the sources through tsx; benchmarks: the build) and waits until /health answers. */
export interface SpawnOptions {
  /** Extra node flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /**
   * Run the compiled server (dist/src/main.js, built by `npm run build`) exactly as `npm start` does, instead of the
   * TypeScript sources through tsx. Benchmarks measure this: tsx turns on source maps, which makes every Error's
   * stack (the SQLite driver builds one per query) many times dearer than in production. `npm run build` runs on the
   * current sources first (once per benchmark process), so a fresh checkout works and an old dist/ is never measured.
   */
  built?: boolean;
  /**
   * The checkout to run (default: this one). A benchmark measuring an older commit beside the current code points it
   * at that commit's worktree; with `built`, that checkout's own `npm run build` runs there first.
   */
  cwd?: string;
}

const builtCheckouts = new Set<string>();

const START_TIMEOUT_MS = 120_000;

/** The checkout's own `npm run build` (its package.json says how), once per checkout and process. */
function buildOnce(cwd: string): void {
  if (builtCheckouts.has(cwd)) return;
  execFileSync('npm', ['run', 'build', '--silent'], { cwd, stdio: 'inherit' });
  builtCheckouts.add(cwd);
}

export async function spawnServer(env: Record<string, string>, options: SpawnOptions = {}): Promise<ServerProcess> {
  const cwd = options.cwd ?? root;
  if (options.built) buildOnce(cwd);
  const port = await freePort();
  const entry = options.built ? ['dist/src/main.js'] : ['--import', 'tsx', 'src/main.ts'];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry], {
    cwd,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  // A bound for a server that never comes up, not a wait: on a busy machine compiling the sources alone can take
  // most of a minute, and a caller's own hook timeout still bounds the whole set-up.
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${url}/health`)).status < 600) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start within ${START_TIMEOUT_MS / 1000} s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    child,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

/**
 * A benchmark's helper server (a script under scripts/lib run through tsx) as its own process, once it prints its
 * first line (it says it listens); rejects if it exits first.
 */
export async function startScript(script: string, env: Record<string, string> = {}): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => void child.kill('SIGTERM') };
}
