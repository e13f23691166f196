/** Console tag: the account's console page, its two files, and its charting library's two (uPlot). */
import type { RawReply } from '../api/types.js';
import { consoleAsset } from '../services/console/console-service.js';

/**
 * The playground's policy: only this origin's script, style and API; no inline script or style; no HTML built from
 * strings (Trusted Types with no policy), so nothing an API answer holds can become markup. Nothing may frame it.
 */
const consolePolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

const revalidate = { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' };

export async function getConsole(): Promise<RawReply> {
  return { status: 200, raw: consoleAsset('index.html'), contentType: 'text/html; charset=utf-8', headers: { ...revalidate, 'Content-Security-Policy': consolePolicy } };
}

export async function getConsoleScript(): Promise<RawReply> {
  return { status: 200, raw: consoleAsset('console.js'), contentType: 'text/javascript; charset=utf-8', headers: revalidate };
}

export async function getConsoleStyle(): Promise<RawReply> {
  return { status: 200, raw: consoleAsset('console.css'), contentType: 'text/css; charset=utf-8', headers: revalidate };
}

export async function getConsoleChartScript(): Promise<RawReply> {
  return { status: 200, raw: consoleAsset('uplot.js'), contentType: 'text/javascript; charset=utf-8', headers: revalidate };
}

export async function getConsoleChartStyle(): Promise<RawReply> {
  return { status: 200, raw: consoleAsset('uplot.css'), contentType: 'text/css; charset=utf-8', headers: revalidate };
}
