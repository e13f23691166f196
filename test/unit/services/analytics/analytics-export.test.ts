import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors/app-error.js';
import { BUCKET_METRICS, csvField, parseMetrics, RAW_METRICS } from '../../../../src/services/analytics/analytics-export.js';

describe('parseMetrics', () => {
  it('when absent, then every column of the granularity, in order', () => {
    expect(parseMetrics(undefined, RAW_METRICS)).toEqual(['query', 'searchMode', 'resultCount', 'responseTimeMs', 'status', 'createdAt']);
    expect(parseMetrics(undefined, BUCKET_METRICS)[0]).toBe('searches');
  });

  it('when listed, then in the order given, spaces trimmed, duplicates dropped', () => {
    expect(parseMetrics(' createdAt ,query,createdAt', RAW_METRICS)).toEqual(['createdAt', 'query']);
  });

  it('when a column is unknown or none is named, then 400 VALIDATION_ERROR on /metrics listing the allowed ones', () => {
    for (const metrics of ['query,nope', ' , ', 'searches']) {
      const error = (() => {
        try {
          parseMetrics(metrics, RAW_METRICS);
        } catch (e) {
          return e as AppError;
        }
      })();
      expect(error?.code).toBe('VALIDATION_ERROR');
      expect(error?.details.errors).toEqual([expect.objectContaining({ location: 'query', path: '/metrics', message: expect.stringContaining('allowed for this granularity: query, searchMode') })]);
    }
  });
});

describe('csvField', () => {
  it('when a value has a comma, quote, line break or edge space, then it is quoted with quotes doubled', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField(42)).toBe('42');
    expect(csvField(new Date('2026-11-22T10:00:00Z'))).toBe('2026-11-22T10:00:00.000Z');
  });
});
