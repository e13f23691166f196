import type { components } from '../../generated/openapi.js';
import type { AppError } from '../errors/app-error.js';
import { serviceVersion } from '../lib/version.js';

type Meta = components['schemas']['Meta'];
type ErrorEnvelope = components['schemas']['ErrorEnvelope'];

export function meta(requestId: string): Meta {
  return { timestamp: new Date().toISOString(), requestId, version: serviceVersion };
}

export function successBody<T>(data: T, requestId: string): { success: true; data: T; meta: Meta } {
  return { success: true, data, meta: meta(requestId) };
}

export function errorBody(error: AppError, requestId: string): ErrorEnvelope {
  return {
    success: false,
    error: { code: error.code, message: error.message, details: error.details },
    meta: { timestamp: new Date().toISOString(), requestId },
  };
}
