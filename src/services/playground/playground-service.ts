import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findUp } from '../../lib/find-up.js';

/**
 * The search playground's files (public/playground): its page, script and style, as they are in the repository
 * (no build step, so what a reader opens is what the browser runs). Each is read once.
 */
export type PlaygroundAsset = 'index.html' | 'playground.js' | 'playground.css';

const assets = new Map<PlaygroundAsset, Buffer>();

export function playgroundAsset(name: PlaygroundAsset): Buffer {
  let asset = assets.get(name);
  if (!asset) assets.set(name, (asset = readFileSync(join(findUp('public/playground'), name))));
  return asset;
}
