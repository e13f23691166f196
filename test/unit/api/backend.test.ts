import { describe, expect, it } from 'vitest';
import { createApiBackend } from '../../../src/api/backend.js';
import type { Reply } from '../../../src/api/types.js';
import { handlers } from '../../../src/handlers/index.js';
import type { Services } from '../../../src/composition.js';

const services = {} as Services;
const answer = async (): Promise<Reply> => ({ status: 200, data: {} });

describe('createApiBackend', () => {
  it('when every handler names an operation of the contract, then it starts with all of them registered', async () => {
    const api = await createApiBackend(services);
    for (const operationId of Object.keys(handlers)) expect(api.handlers[operationId], operationId).toBe(handlers[operationId]);
  });

  it('when a handler names an operationId the contract does not have, then the start fails naming it', async () => {
    await expect(createApiBackend(services, { ...handlers, listUnicorns: answer })).rejects.toThrow(/Unknown operationId listUnicorns/);
  });
});
