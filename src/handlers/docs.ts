/** Docs tag: the API reference page and the contract it renders. */
import type { RawReply } from '../api/types.js';
import { contractJson, contractYaml, redocScript, referencePage } from '../services/docs/docs-service.js';

/**
 * Only what Redoc needs: its script from this origin, the contract from this origin, its search worker from a
 * blob: URL, and inline styles (styled-components writes <style> elements). Nothing may frame the page.
 */
const referencePagePolicy = [
  "default-src 'none'",
  "script-src 'self'",
  'worker-src blob:',
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const revalidate = { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' };

export async function getApiReference(): Promise<RawReply> {
  return { status: 200, raw: referencePage(), contentType: 'text/html; charset=utf-8', headers: { ...revalidate, 'Content-Security-Policy': referencePagePolicy } };
}

export async function getApiReferenceScript(): Promise<RawReply> {
  // The page asks for `?v=<redoc version>`, so an upgrade changes the URL and a year-long cache is safe.
  const headers = { 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' };
  return { status: 200, raw: redocScript().script, contentType: 'text/javascript; charset=utf-8', headers };
}

export async function getContractJson(): Promise<RawReply> {
  return { status: 200, raw: contractJson(), contentType: 'application/json; charset=utf-8', headers: revalidate };
}

export async function getContractYaml(): Promise<RawReply> {
  return { status: 200, raw: contractYaml(), contentType: 'application/yaml; charset=utf-8', headers: revalidate };
}
