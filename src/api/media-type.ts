import type { Context } from 'openapi-backend';
import { AppError } from '../errors/app-error.js';

/**
 * A body of a type the routed operation does not take is 415 (issue 23: uploads are octet-stream, everything else
 * JSON): the body parser cannot tell, since it runs before routing. Operations that take no body ignore one.
 */
export function assertMediaType(c: Context): void {
  const headers = c.request.headers;
  const length = Number(headers['content-length'] || 0);
  if (!(length > 0 || headers['transfer-encoding'])) return;
  const declared = Object.keys((c.operation.requestBody as { content?: Record<string, unknown> } | undefined)?.content ?? {});
  if (declared.length === 0) return;
  const raw = headers['content-type'];
  const type = String((Array.isArray(raw) ? raw[0] : raw) ?? '').split(';')[0]!.trim().toLowerCase();
  if (declared.includes(type)) return;
  throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Send the body as ${declared.join(' or ')}.`, { contentType: type || null });
}
