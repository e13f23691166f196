import { beforeAll, describe, expect, it } from 'vitest';
import Koa from 'koa';
import { OpenAPIBackend } from 'openapi-backend';
import { backendOptions } from '../../../src/api/backend.js';
import { responseValidator, type ContractViolation } from '../../../src/api/response-validator.js';

let api: OpenAPIBackend;

beforeAll(async () => {
  api = new OpenAPIBackend(backendOptions(false));
  await api.init();
});

/** Runs one Koa request through the validator, the inner middleware standing in for a route with no operation. */
async function answer(status: number, body: unknown): Promise<ContractViolation[]> {
  const violations: ContractViolation[] = [];
  const koa = new Koa();
  koa.use(async (ctx, next) => {
    ctx.state.requestId = 'req_test';
    await next();
  });
  koa.use(responseValidator(api, violations));
  koa.use((ctx) => {
    ctx.set('X-Request-Id', 'req_test');
    ctx.status = status;
    ctx.body = body;
  });
  const server = koa.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const { port } = server.address() as { port: number };
    await fetch(`http://127.0.0.1:${port}/nowhere`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return violations;
}

describe('responseValidator on a route the contract does not know', () => {
  it('accepts the error envelope', async () => {
    const envelope = { success: false, error: { code: 'NOT_FOUND', message: 'No route GET /nowhere', details: {} }, meta: { timestamp: '2026-11-27T06:00:00.000Z', requestId: 'req_test' } };
    expect(await answer(404, envelope)).toEqual([]);
  });

  it('records a body that is not the error envelope, with what is wrong', async () => {
    const violations = await answer(404, { message: 'not found' });
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ method: 'GET', path: '/nowhere', operationId: null, status: 404 });
    expect(JSON.stringify(violations[0]!.problems)).toContain('success');
  });
});
