/**
 * The README as a new user follows it: every fenced block runs, in order, in one shell, on the quick
 * start's data, against a server started with the defaults of `npm start`. A block that cannot run here says why in
 * a `<!-- readme-test: skip: reason -->` line right above it (a server in the foreground, your own database servers).
 * A block passes when the shell does (`set -e -o pipefail`) and no answer it printed is an error envelope.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../../scripts/lib/spawn-server.js';
import { repoRoot } from './support/contract.js';

interface Block {
  line: number;
  lang: string;
  code: string;
  skip: string | null;
}

/** The README's fenced blocks, each with its language and the reason it is not run, if it has one. */
function readmeBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  for (const match of text.matchAll(/(?:<!-- readme-test: skip: (.+?) -->\n)?```(\w*)\n([\s\S]*?)```/g)) {
    blocks.push({ line: text.slice(0, match.index).split('\n').length, skip: match[1] ?? null, lang: match[2]!, code: match[3]! });
  }
  return blocks;
}

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
/** The tools the README asks a reader for; without them the file is skipped, except on CI (CI=true) where that fails. */
const tools = ['curl', 'jq', 'sqlite3'];
const missing = tools.filter((tool) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
});
const runs = missing.length === 0 || process.env.CI === 'true';
if (!runs) console.warn(`test/contract/readme.test.ts skipped: ${missing.join(', ')} missing (apt-get install -y ${missing.join(' ')}; with CI=true this fails)`);
const blocks = readmeBlocks(readme);
const run = blocks.filter((b) => b.skip === null);

let server: ServerProcess;
let dataDir: string;

describe.skipIf(!runs)(`the README, block by block${runs ? '' : ` (skipped: ${missing.join(', ')} missing)`}`, () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'quarry-readme-'));
    server = await spawnServer({ NODE_ENV: 'development', DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('when a block is not run, then it says why, and every block that is run is shell', () => {
    console.info(`README: ${blocks.length} blocks, ${run.length} run: ${run.map((b) => `line ${b.line}`).join(', ')}`);
    expect(run.filter((b) => b.lang !== 'sh').map((b) => `line ${b.line}: ${b.lang || 'no language'}`)).toEqual([]);
    expect(run.length).toBeGreaterThanOrEqual(3);
  });

  it('when the blocks run in order in one shell on the quick-start data, then each succeeds and no answer is an error', async () => {
    // The blocks name the address `npm start` serves; this server listens on a free port instead.
    const script = run.map((b) => `echo "### README line ${b.line}"\n${b.code}`).join('\n').replaceAll('http://127.0.0.1:3000', server.url);
    let stdout = '';
    try {
      ({ stdout } = await promisify(execFile)('bash', ['-c', `set -e -o pipefail\n${script}`], {
        cwd: repoRoot,
        env: { ...process.env, TMPDIR: dataDir },
        timeout: 240_000,
        maxBuffer: 10 * 1024 * 1024,
      }));
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      throw new Error(`the README's shell exited with ${failed.code}:\n${failed.stdout}\n${failed.stderr}`);
    }
    console.info(stdout);
    expect(stdout).not.toMatch(/"success":\s*false/);
    expect(stdout).not.toMatch(/^null$/m);
    // The quick start's search, the filtered one and the hybrid one each found the shop's rows.
    expect(stdout).toContain('"status":"healthy"');
    expect(stdout.match(/"snippet":"[^"]*<mark>/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(stdout).toMatch(/"publishableKey":"quarry_pk_test_\w+"/);
  }, 300_000);
});
