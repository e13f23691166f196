/** Playground tag: the search playground page and its two files. */
import type { RawReply } from '../api/types.js';
import { playgroundAsset } from '../services/playground/playground-service.js';

/**
 * Only this origin's script, style and API; no inline script or style; and no HTML built from strings (Trusted
 * Types with no policy), so a snippet can never become markup. Nothing may frame the page.
 */
const playgroundPolicy = [
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

export async function getSearchPlayground(): Promise<RawReply> {
  return { status: 200, raw: playgroundAsset('index.html'), contentType: 'text/html; charset=utf-8', headers: { ...revalidate, 'Content-Security-Policy': playgroundPolicy } };
}

export async function getSearchPlaygroundScript(): Promise<RawReply> {
  return { status: 200, raw: playgroundAsset('playground.js'), contentType: 'text/javascript; charset=utf-8', headers: revalidate };
}

export async function getSearchPlaygroundStyle(): Promise<RawReply> {
  return { status: 200, raw: playgroundAsset('playground.css'), contentType: 'text/css; charset=utf-8', headers: revalidate };
}
