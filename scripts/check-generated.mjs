// Generates the TypeScript types of openapi.yaml. `--write` updates generated/openapi.ts (npm run generate);
// without it, fails when the committed file is not what openapi-typescript makes of openapi.yaml today.
// Request fields with a default stay optional for clients (--default-non-nullable false): the server applies them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const target = 'generated/openapi.ts';
const write = process.argv.includes('--write');
const out = write ? target : join(mkdtempSync(join(tmpdir(), 'quarry-gen-')), 'openapi.ts');
execFileSync('npx', ['openapi-typescript', 'openapi.yaml', '--default-non-nullable', 'false', '-o', out], { stdio: ['ignore', 'ignore', 'pipe'] });
if (write) {
  console.log(`${target} written from openapi.yaml`);
} else if (readFileSync(out, 'utf8') !== readFileSync(target, 'utf8')) {
  console.error(`${target} is stale: run \`npm run generate\` and commit the result.`);
  process.exit(1);
} else {
  console.log(`${target} matches openapi.yaml`);
}
