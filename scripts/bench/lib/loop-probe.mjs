/**
 * The search benchmarks' event-loop probe, preloaded into the Quarry process with `node --import`: how
 * long the server's event loop was kept from turning, by perf_hooks' monitorEventLoopDelay (a 10 ms timer whose
 * lateness is recorded). Every SIGUSR2 prints the delays since the previous one as a `LOOP-PROBE {json}` line on
 * stderr (milliseconds: p50, p99, max) and starts over. A step that blocks the loop for long shows in the max and
 * p99 whatever the concurrency; the probe itself costs one timer.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();

// Node records the time between two of the timer's turns, the timer's own 10 ms included (an idle loop reads a p50
// of about 10.1 ms on Node 20): the lateness is that time less the resolution.
const ms = (ns) => Math.round(Math.max(0, ns / 1e6 - RESOLUTION_MS) * 100) / 100;
process.on('SIGUSR2', () => {
  console.error(`LOOP-PROBE ${JSON.stringify({ p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) })}`);
  histogram.reset();
});
