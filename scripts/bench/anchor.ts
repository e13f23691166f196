/**
 * The search-speed anchor alone (Quarry against Sphinx on the same PostgreSQL table; scripts/bench/lib/anchor.ts says how),
 * a shortcut for `npm run bench:search -- --anchor-only`.
 *
 *   npm run bench:anchor -- [requests per set at concurrency 1, default 200] [--rows 1000000] [--baseline <git ref>]
 */
import { parseAnchorArgs, runAnchor } from './lib/anchor.js';

const { requests, rows, baseline } = parseAnchorArgs(process.argv.slice(2), 'npm run bench:anchor -- [requests]');
await runAnchor({ requests, rows, baseline });
