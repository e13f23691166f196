/**
 * A separate OS process for the rate-limit integration test: connects to Redis, says "ready", waits for "go" on
 * stdin so that every worker fires at the same moment, then sends N concurrent requests for one subject and
 * prints how many were admitted. With RL_ACCOUNT set, each request is counted against its key subject and the
 * account subject together (consumeAll), as the service counts a key's request.
 */
import { perHourRule, RedisStore, type RateLimitRule } from '../../src/rate-limit/index.js';

const { REDIS_URL, RL_PREFIX, RL_SUBJECT, RL_REQUESTS, RL_LIMIT, RL_ACCOUNT, RL_ACCOUNT_LIMIT } = process.env;
const limit = Number(RL_LIMIT);
const rule: RateLimitRule = { limit, windowSeconds: 3600, burstLimit: limit, burstWindowSeconds: 60, blockSeconds: 300 };

const store = new RedisStore({ url: REDIS_URL, prefix: RL_PREFIX, commandTimeoutMs: 10_000 });
await store.ping();
process.stdout.write('ready\n');
await new Promise((resolve) => process.stdin.once('data', resolve));

const decide = () => RL_ACCOUNT
  ? store.consumeAll([{ subject: RL_SUBJECT!, rule }, { subject: RL_ACCOUNT, rule: perHourRule(Number(RL_ACCOUNT_LIMIT)) }], Date.now())
  : store.consume(RL_SUBJECT!, rule, Date.now());
const decisions = await Promise.all(Array.from({ length: Number(RL_REQUESTS) }, decide));
process.stdout.write(`${JSON.stringify({ admitted: decisions.filter((d) => d.allowed).length })}\n`);
await store.close();
process.stdin.destroy();
