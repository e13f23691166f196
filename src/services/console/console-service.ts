import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findUp } from '../../lib/find-up.js';

/**
 * The console's files (public/console): its page, script and style, as they are in the repository (no build step,
 * so what a reader opens is what the browser runs). Each is read once.
 */
export type ConsoleAsset = 'index.html' | 'console.js' | 'console.css';

const assets = new Map<ConsoleAsset, Buffer>();

export function consoleAsset(name: ConsoleAsset): Buffer {
  let asset = assets.get(name);
  if (!asset) assets.set(name, (asset = readFileSync(join(findUp('public/console'), name))));
  return asset;
}
