import { describe, expect, it } from 'vitest';
import { validationError } from '../../../src/errors/app-error.js';

describe('validationError', () => {
  it('names the first problem in its message and lists them all', () => {
    const error = validationError([
      { location: 'body', path: '/query', message: 'must contain a word' },
      { location: 'query', path: '/limit', message: 'must be <= 100' },
    ]);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toBe('The request is invalid: body/query must contain a word.');
    expect(error.details).toEqual({ errors: [
      { location: 'body', path: '/query', message: 'must contain a word' },
      { location: 'query', path: '/limit', message: 'must be <= 100' },
    ] });
  });

  it('speaks of the whole body when the problem is at its root, and counts what it left out', () => {
    const error = validationError([{ location: 'body', path: '/', message: 'must be object' }], 3);
    expect(error.message).toBe('The request is invalid: body must be object.');
    expect(error.details).toMatchObject({ omittedErrors: 3 });
  });

  it('has no omittedErrors when nothing was left out', () => {
    expect(validationError([{ location: 'path', path: '/id', message: 'is too long' }]).details).not.toHaveProperty('omittedErrors');
  });
});
