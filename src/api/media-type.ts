import type { Context } from 'openapi-backend';
import { AppError } from '../errors/app-error.js';

/**
 * A body of a type the routed operation does not take is 415 naming the type it does take (uploads are
 * octet-stream, everything else JSON), a body sent without a type included: the body parser cannot tell, since it
 * runs before routing, so it reads JSON only and leaves the rest to this check. Operations that take no body ignore
 * a JSON one.
 */
export function assertMediaType(c: Context): void {
  const headers = c.request.headers;
  const length = Number(headers['content-length'] || 0);
  if (!(length > 0 || headers['transfer-encoding'])) return;
  const declared = Object.keys((c.operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content ?? {});
  if (declared.length === 0) declared.push('application/json');
  const raw = headers['content-type'];
  const type = String((Array.isArray(raw) ? raw[0] : raw) ?? '').split(';')[0]!.trim().toLowerCase();
  if (declared.includes(type)) return;
  throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Send the body as ${declared.join(' or ')}.`, { contentType: type || null });
}
