import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findUp } from '../../lib/find-up.js';

/**
 * The console's files (public/console): its page, script and style, as they are in the repository (no build step,
 * so what a reader opens is what the browser runs), and the charting library it draws with (uPlot), as its package
 * ships it in node_modules, so the page needs nothing from another origin. Each is read once.
 */
export type ConsoleAsset = 'index.html' | 'console.js' | 'console.css' | 'uplot.js' | 'uplot.css';

const chartLibrary: Partial<Record<ConsoleAsset, string>> = { 'uplot.js': 'uPlot.iife.min.js', 'uplot.css': 'uPlot.min.css' };

const assets = new Map<ConsoleAsset, Buffer>();

export function consoleAsset(name: ConsoleAsset): Buffer {
  let asset = assets.get(name);
  if (!asset) {
    const library = chartLibrary[name];
    const path = library ? join(findUp('node_modules/uplot/dist'), library) : join(findUp('public/console'), name);
    assets.set(name, (asset = readFileSync(path)));
  }
  return asset;
}
