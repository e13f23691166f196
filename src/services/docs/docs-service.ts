import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parse } from 'yaml';
import { contractPath } from '../../lib/contract.js';

/**
 * The Docs tag's content: the contract as published (the file's bytes, and the same document as JSON), the API
 * reference page, and Redoc's standalone script from node_modules, so the page needs no CDN. Each is read once.
 */

const require = createRequire(import.meta.url);

interface Contract {
  yaml: Buffer;
  json: string;
  title: string;
}

interface Redoc {
  version: string;
  script: Buffer;
}

let contract: Contract | undefined;
let redoc: Redoc | undefined;
let page: string | undefined;

function loadPublishedContract(): Contract {
  // JSON and YAML come from the same bytes, so the two representations can never disagree.
  const yaml = readFileSync(contractPath());
  const document = parse(yaml.toString('utf8')) as { info?: { title?: string; version?: string } };
  const title = `${document.info?.title ?? 'API'} ${document.info?.version ?? ''}`.trim();
  return { yaml, json: JSON.stringify(document), title };
}

function loadRedoc(): Redoc {
  const { version } = require('redoc/package.json') as { version: string };
  return { version, script: readFileSync(require.resolve('redoc/bundles/redoc.standalone.js')) };
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

/** `GET /openapi.yaml`: the contract file, byte for byte. */
export function contractYaml(): Buffer {
  return (contract ??= loadPublishedContract()).yaml;
}

/** `GET /openapi.json`: the contract parsed from that file, as JSON text. */
export function contractJson(): string {
  return (contract ??= loadPublishedContract()).json;
}

/** `GET /docs/redoc.standalone.js`: Redoc's standalone bundle and its version (the page asks for `?v=<version>`). */
export function redocScript(): Redoc {
  return (redoc ??= loadRedoc());
}

/**
 * `GET /docs`: a page with no inline script. Redoc's bundle finds the `<redoc spec-url>` element itself and loads
 * the contract from /openapi.json, which keeps the page's Content-Security-Policy at `script-src 'self'`.
 */
export function referencePage(): string {
  // A data: icon, so browsers do not ask for /favicon.ico (a 404 here).
  page ??= [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml((contract ??= loadPublishedContract()).title)} reference</title>`,
    '<link rel="icon" href="data:,">',
    '<style>body { margin: 0; padding: 0; }</style>',
    '</head>',
    '<body>',
    '<redoc spec-url="/openapi.json" path-in-middle-panel="true" required-props-first="true"></redoc>',
    `<script src="/docs/redoc.standalone.js?v=${encodeURIComponent(redocScript().version)}"></script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
  return page;
}
