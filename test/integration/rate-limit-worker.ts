/**
 * A separate OS process for the rate-limit integration test: connects to Redis, says "ready", waits for "go" on
 * stdin so that every worker fires at the same moment, then sends N concurrent requests for one subject and
 * prints how many were admitted.
 */
import { RedisStore, type RateLimitRule } from '../../src/rate-limit/index.js';

const { REDIS_URL, RL_PREFIX, RL_SUBJECT, RL_REQUESTS, RL_LIMIT } = process.env;
const limit = Number(RL_LIMIT);
const rule: RateLimitRule = { limit, windowSeconds: 3600, burstLimit: limit, burstWindowSeconds: 60, blockSeconds: 300 };

const store = new RedisStore({ url: REDIS_URL, prefix: RL_PREFIX, commandTimeoutMs: 10_000 });
await store.ping();
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));

const decisions = await Promise.all(
  Array.from({ length: Number(RL_REQUESTS) }, () => store.consume(RL_SUBJECT!, rule, Date.now())),
);
process.stdout.write(`${JSON.stringify({ admitted: decisions.filter((d) => d.allowed).length })}\n`);
await store.close();
process.stdin.destroy();
