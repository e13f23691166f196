/**
 * The answers of Quarry's own pages (the search playground, the console) and their files. Each page allows only
 * this origin's script, style and API; no inline script or style; and no HTML built from strings (Trusted Types with
 * no policy), so nothing an API answer holds (a snippet, a table's name) can become markup. Nothing may frame them.
 * Every file is checked again on each load (no-cache), so a new version is never mixed with an old one.
 */
import type { Readable } from 'node:stream';
import type { RawReply } from './types.js';

const ownPagePolicy = [
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

type Body = string | Buffer | Readable;

export const pageReply = (raw: Body): RawReply =>
  ({ status: 200, raw, contentType: 'text/html; charset=utf-8', headers: { ...revalidate, 'Content-Security-Policy': ownPagePolicy } });

export const scriptReply = (raw: Body): RawReply => ({ status: 200, raw, contentType: 'text/javascript; charset=utf-8', headers: revalidate });

export const styleReply = (raw: Body): RawReply => ({ status: 200, raw, contentType: 'text/css; charset=utf-8', headers: revalidate });
