import { describe, expect, it } from 'vitest';
import { loadContract } from '../../../src/lib/contract.js';
import { handlers } from '../../../src/handlers/index.js';

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

function contractOperations() {
  const operations: { id: string; tags: string[] }[] = [];
  for (const item of Object.values(loadContract().paths ?? {})) {
    for (const method of methods) {
      const operation = item?.[method];
      if (operation) operations.push({ id: operation.operationId!, tags: operation.tags ?? [] });
    }
  }
  return operations;
}

describe('the contract is the route table', () => {
  it('when the contract is read, then every operationId has a handler and every handler an operation', () => {
    const ids = contractOperations().map((op) => op.id).sort();
    expect(Object.keys(handlers).sort()).toEqual(ids);
  });

  it('when operations are listed, then each has exactly one tag and a camelCase verb+noun id', () => {
    for (const op of contractOperations()) {
      expect(op.tags, op.id).toHaveLength(1);
      expect(op.id).toMatch(/^[a-z]+[A-Z][A-Za-z]+$/);
    }
  });
});
