/**
 * Publishable search keys: keys meant to be put in a web page, so public by design. What keeps one
 * harmless is decided here: which operations it may call and from which pages, and which restrictions it is made
 * with; what it may search and how much one visitor may use it are src/rules/key-scope.ts, which the search and
 * rate-limit services apply too. Secret keys, in turn, must never be used from a page.
 */
import type { components } from '../../../generated/openapi.js';
import { AppError, notFound, validationError, type FieldProblem } from '../../errors/app-error.js';
import { normalizeOrigin } from '../../lib/origins.js';
import type { ApiKeyRecord } from '../../repositories/api-key-repository.js';
import type { DatabaseConnectionRecord } from '../../repositories/database-connection-repository.js';

type Permission = components['schemas']['Permission'];

/** A publishable key can only search and ask for suggestions (`search`), never more. */
export const PUBLISHABLE_PERMISSIONS: Permission[] = ['search'];

/** Where a key is used from, as the HTTP layer sees the request. */
export interface KeyUse {
  /** The request's `Origin` header: the page's origin when a browser sent it, else null. */
  origin: string | null;
  /** This server's own origin (scheme and host as the client reached it): where its console is served. */
  ownOrigin: string;
  /** The operation is one a publishable key may call (`x-quarry-publishable` in openapi.yaml). */
  publishableOperation: boolean;
}

/**
 * Refuses a key used where it must not be: a secret key from another site's web page (a leaked secret the moment
 * the page is served), a publishable key on any operation but search and suggestions, or from a page of an origin it does not
 * list. A publishable key without `Origin` (a server, curl) is accepted: anyone can send any `Origin` outside a
 * browser, which is why such a key can only search what it names and is limited per client IP.
 *
 * A secret key is accepted from Quarry's own origin: its pages (the console, the playground) run only Quarry's own
 * scripts under a policy that allows no other origin's code and no inline script, and keep a pasted key in memory,
 * so nothing publishes it. Another origin, however alike (another port, scheme or host), is a page Quarry did not
 * serve; a browser cannot forge `Origin`, and a client outside one that could has no need to: it may omit it.
 */
export function checkKeyUse(key: ApiKeyRecord, use: KeyUse): void {
  if (key.kind !== 'publishable') {
    if (use.origin !== null && use.origin !== use.ownOrigin) {
      throw new AppError('SECRET_KEY_IN_BROWSER', `Secret keys belong on a server: this request came from a web page (Origin ${use.origin}). Use a publishable key (quarry_pk_...) in pages.`, {
        origin: use.origin,
      });
    }
    return;
  }
  if (!use.publishableOperation) {
    throw new AppError('INSUFFICIENT_PERMISSIONS', 'A publishable key can only search (POST /api/v1/search) and ask for suggestions (GET /api/v1/search/suggestions).', {
      keyType: 'publishable', allowedOperations: ['searchDatabases', 'getSearchSuggestions'],
    });
  }
  const allowed = key.allowedOrigins ?? [];
  if (use.origin !== null && !allowed.includes(use.origin)) {
    throw new AppError('ORIGIN_NOT_ALLOWED', `This publishable key may not be used from ${use.origin}. Add the origin to the key's allowedOrigins.`, {
      origin: use.origin, allowedOrigins: allowed,
    });
  }
}

/** A publishable key's restrictions as given in a create or update request. */
export interface PublishableInput {
  allowedOrigins?: string[];
  databases?: string[];
  tables?: string[];
  requestsPerIpPerHour?: number;
}

/**
 * Checks and normalises a publishable key's restrictions: each origin to the form browsers send, each database the
 * caller's (else the same 404 as an unknown id) and of the key's environment (else 400).
 */
export async function publishableRestrictions(
  input: PublishableInput,
  environment: ApiKeyRecord['environment'],
  findOwned: (id: string) => Promise<DatabaseConnectionRecord | null>,
): Promise<Partial<Pick<ApiKeyRecord, 'allowedOrigins' | 'databaseIds' | 'tableNames' | 'requestsPerIpPerHour'>>> {
  const problems: FieldProblem[] = [];
  const origins = input.allowedOrigins?.map((origin, i) => {
    const normalized = normalizeOrigin(origin);
    if (!normalized) problems.push({ location: 'body', path: `/allowedOrigins/${i}`, message: 'must be an origin: http(s)://host[:port], no path' });
    return normalized ?? origin;
  });
  for (const [i, id] of (input.databases ?? []).entries()) {
    const record = await findOwned(id);
    if (!record) throw notFound('database connection', id);
    if (record.environment !== environment) {
      problems.push({ location: 'body', path: `/databases/${i}`, message: `is a ${record.environment} connection; a ${environment} key searches only ${environment} connections` });
    }
  }
  if (problems.length > 0) throw validationError(problems as [FieldProblem, ...FieldProblem[]]);
  return {
    ...(origins !== undefined && { allowedOrigins: [...new Set(origins)] }),
    ...(input.databases !== undefined && { databaseIds: input.databases }),
    ...(input.tables !== undefined && { tableNames: input.tables }),
    ...(input.requestsPerIpPerHour !== undefined && { requestsPerIpPerHour: input.requestsPerIpPerHour }),
  };
}
