import type { components } from '../../generated/openapi.js';
import type { AppError } from '../errors/app-error.js';
import { isoTimestamp } from '../lib/iso-time.js';

type Meta = components['schemas']['Meta'];
type ErrorEnvelope = components['schemas']['ErrorEnvelope'];

export const serviceVersion = '1.0.0';

export function meta(requestId: string): Meta {
  return { timestamp: isoTimestamp(Date.now()), requestId, version: serviceVersion };
}

export function successBody<T>(data: T, requestId: string): { success: true; data: T; meta: Meta } {
  return { success: true, data, meta: meta(requestId) };
}

export function errorBody(error: AppError, requestId: string): ErrorEnvelope {
  return {
    success: false,
    error: { code: error.code, message: error.message, details: error.details },
    meta: { timestamp: isoTimestamp(Date.now()), requestId },
  };
}
