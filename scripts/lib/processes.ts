/** What a running process (and the ones it started) holds, read from Linux's /proc: benchmarks and process tests. */
import { readFileSync } from 'node:fs';

/** A process's resident memory (VmRSS), in bytes. */
export function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? NaN) * 1024;
}

/** The processes `pid` started (Node cluster's workers, for one), from /proc. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The resident memory of `pid` and every process below it, in bytes. */
export function treeRssOf(pid: number): number {
  return childPids(pid).reduce((sum, child) => sum + treeRssOf(child), rssOf(pid));
}

/** The sum of the peaks (VmHWM) of `pid` and every process below it, in bytes: what they held at once was at most this. */
export function treePeakRssOf(pid: number): number {
  return childPids(pid).reduce((sum, child) => sum + treePeakRssOf(child), peakRssOf(pid));
}

/** A process's peak resident memory so far (VmHWM), in bytes. */
export function peakRssOf(pid: number): number {
  const kb = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? NaN) * 1024;
}
