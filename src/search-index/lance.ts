/**
 * The one place that loads LanceDB (Quarry's own search index) and Apache Arrow. Everything else in
 * src/search-index talks to the index through index-store.ts, the way only repositories talk to Sequelize.
 *
 * Two traps of this engine on this platform are handled here, before the first LanceDB call:
 * - On a 2-core machine, building a text index of 20,000 rows or more, and `optimize()` after an upsert, hang for
 *   good with the default thread count (upstream lance PRs #6085, #7423). Three or more CPU threads avoid it, so
 *   LANCE_CPU_THREADS defaults to 3 unless the operator set it (the configuration refuses fewer at start).
 * - Arrow objects built from an ES-module import of apache-arrow are a different class from the ones LanceDB (a
 *   CommonJS package) checks against, and such tables are written with 0 rows and no error. Arrow is therefore
 *   loaded with `require`, the same instance LanceDB uses.
 */
import { createRequire } from 'node:module';

type LanceModule = typeof import('@lancedb/lancedb');
type ArrowModule = typeof import('apache-arrow');

const require = createRequire(import.meta.url);

let loaded: Promise<{ lancedb: LanceModule; arrow: ArrowModule }> | null = null;

/** LanceDB and Arrow, loaded once per process with the environment they need. */
export function loadLance(): Promise<{ lancedb: LanceModule; arrow: ArrowModule }> {
  loaded ??= (async () => {
    process.env.LANCE_CPU_THREADS ||= '3';
    // LanceDB logs through its own logger on stderr; Quarry logs what matters itself.
    process.env.LANCEDB_LOG ||= 'error';
    const lancedb = require('@lancedb/lancedb') as LanceModule;
    const arrow = require('apache-arrow') as ArrowModule;
    return { lancedb, arrow };
  })();
  return loaded;
}
