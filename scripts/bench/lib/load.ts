import autocannon from 'autocannon';

export interface LoadResult {
  label: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/**
 * Drives one URL with autocannon from this process (the server runs in another), after a warm-up.
 * `body` and `path` let each request differ (a new query, a new page), so no cache flatters the figure.
 */
export async function load(
  label: string,
  url: string,
  options: { headers?: Record<string, string>; seconds?: number; connections?: number; method?: string; body?: () => string; path?: () => string } = {},
): Promise<LoadResult> {
  const run = (duration: number) =>
    autocannon({
      url,
      method: (options.method ?? 'GET') as 'GET',
      headers: options.headers,
      connections: options.connections ?? 16,
      duration,
      ...(options.body || options.path
        ? { requests: [{ setupRequest: (request: object) => ({ ...request, ...(options.body && { body: options.body() }), ...(options.path && { path: options.path() }) }) }] }
        : {}),
    });
  await run(2);
  const result = await run(options.seconds ?? 8);
  return {
    label,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

export function printTable(title: string, baseline: LoadResult, rows: LoadResult[]): void {
  console.log(`\n${title}`);
  console.log('| case | req/s | ratio to baseline | p50 ms | p99 ms | non-2xx |');
  console.log('|---|---|---|---|---|---|');
  for (const row of [baseline, ...rows]) {
    const ratio = (row.requestsPerSecond / baseline.requestsPerSecond).toFixed(2);
    console.log(`| ${row.label} | ${row.requestsPerSecond} | ${ratio} | ${row.p50} | ${row.p99} | ${row.non2xx} |`);
  }
}
