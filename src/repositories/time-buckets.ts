import { literal, type Sequelize } from 'sequelize';

export type BucketUnit = 'minute' | 'hour' | 'day' | 'week' | 'month';

/**
 * SQL expression that truncates a timestamp column to the start of its bucket (UTC), as an ISO-like string
 * both dialects agree on: `YYYY-MM-DDTHH:MM:00Z` for minutes and hours, `YYYY-MM-DD` otherwise. Weeks start on Monday.
 */
export function bucketExpression(sequelize: Sequelize, column: string, unit: BucketUnit): ReturnType<typeof literal> {
  if (sequelize.getDialect() === 'postgres') {
    const format = unit === 'minute' || unit === 'hour' ? `'YYYY-MM-DD"T"HH24:MI:00"Z"'` : `'YYYY-MM-DD'`;
    return literal(`to_char(date_trunc('${unit}', ${column} AT TIME ZONE 'UTC'), ${format})`);
  }
  switch (unit) {
    case 'minute':
      return literal(`strftime('%Y-%m-%dT%H:%M:00Z', ${column})`);
    case 'hour':
      return literal(`strftime('%Y-%m-%dT%H:00:00Z', ${column})`);
    case 'day':
      return literal(`date(${column})`);
    case 'week':
      return literal(`date(${column}, 'weekday 0', '-6 days')`);
    case 'month':
      return literal(`strftime('%Y-%m-01', ${column})`);
  }
}

/** Start of the bucket containing `at`, in the same format as bucketExpression, computed in JS. */
export function bucketStart(at: Date, unit: BucketUnit): string {
  const fine = unit === 'minute' || unit === 'hour';
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate(), fine ? at.getUTCHours() : 0, unit === 'minute' ? at.getUTCMinutes() : 0));
  if (fine) return d.toISOString().slice(0, 16) + ':00Z';
  if (unit === 'week') d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  if (unit === 'month') d.setUTCDate(1);
  return d.toISOString().slice(0, 10);
}

/** Every bucket start from `from` to `to` inclusive, so series can show empty buckets. */
export function bucketRange(from: Date, to: Date, unit: BucketUnit): string[] {
  const out: string[] = [];
  const cursor = bucketDate(bucketStart(from, unit));
  while (cursor.getTime() <= to.getTime()) {
    out.push(bucketStart(cursor, unit));
    if (unit === 'minute') cursor.setUTCMinutes(cursor.getUTCMinutes() + 1);
    else if (unit === 'hour') cursor.setUTCHours(cursor.getUTCHours() + 1);
    else if (unit === 'day') cursor.setUTCDate(cursor.getUTCDate() + 1);
    else if (unit === 'week') cursor.setUTCDate(cursor.getUTCDate() + 7);
    else cursor.setUTCMonth(cursor.getUTCMonth() + 1);
  }
  return out;
}

/** The Date a bucket label stands for (labels are `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:00Z`). */
export function bucketDate(label: string): Date {
  return new Date(label.length === 10 ? `${label}T00:00:00Z` : label);
}
