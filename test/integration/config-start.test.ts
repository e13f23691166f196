import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('starting with a bad configuration', () => {
  it('when DB_HOST_ALLOWLIST is "10.0.0.0/40,bad host", then the process exits with code 2 naming both entries, before listening', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-config-start-'));
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', DB_HOST_ALLOWLIST: '10.0.0.0/40,bad host' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain('Invalid configuration:');
      expect(run.stderr).toContain('DB_HOST_ALLOWLIST has an entry that is not a host, address, network or host:port: "10.0.0.0/40"');
      expect(run.stderr).toContain('"bad host"');
      expect(run.stdout).not.toContain('listening');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
