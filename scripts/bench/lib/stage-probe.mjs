/**
 * bench:live-overhead's stage probe (BENCH_PROBE=1), preloaded into the Quarry process with `node --import`: for each
 * request served one at a time, the time from the request's start to the first byte written to PostgreSQL ("before
 * the query") and from the last byte read from PostgreSQL to the response's finish ("after the rows"). Their sum is
 * what the server itself spends around the query, without the HTTP hop or the query. Every SIGUSR2 prints the
 * medians since the previous one as a `STAGE-PROBE {json}` line on stderr and starts over.
 *
 * It patches net.Socket's write and emit (PostgreSQL sockets are told by their remote port, BENCH_PG_PORT or 5432),
 * so it costs every socket operation a comparison: only for the diagnosis, never in the headline figures.
 */
import dc from 'node:diagnostics_channel';
import net from 'node:net';

const pgPort = Number(process.env.BENCH_PG_PORT ?? 5432);
let started = 0;
let firstWrite = 0;
let lastRead = 0;
let before = [];
let after = [];

dc.subscribe('http.server.request.start', () => {
  started = performance.now();
  firstWrite = 0;
  lastRead = 0;
});
dc.subscribe('http.server.response.finish', () => {
  const finished = performance.now();
  // Requests that never reached PostgreSQL (a cached page, an error) say nothing about the stages around a query.
  if (started && firstWrite && lastRead) {
    before.push(firstWrite - started);
    after.push(finished - lastRead);
  }
  started = 0;
});

const write = net.Socket.prototype.write;
net.Socket.prototype.write = function probedWrite(...args) {
  if (started && !firstWrite && this.remotePort === pgPort) firstWrite = performance.now();
  return write.apply(this, args);
};
const emit = net.Socket.prototype.emit;
net.Socket.prototype.emit = function probedEmit(event, ...args) {
  if (event === 'data' && started && this.remotePort === pgPort) lastRead = performance.now();
  return emit.call(this, event, ...args);
};

// stats.ts's median (the upper one of an even count); this file runs inside the server, without TypeScript.
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
process.on('SIGUSR2', () => {
  console.error(`STAGE-PROBE ${JSON.stringify({ requests: before.length, beforeQueryMs: median(before), afterRowsMs: median(after) })}`);
  before = [];
  after = [];
});
