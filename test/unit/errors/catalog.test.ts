import { describe, expect, it } from 'vitest';
import { loadContract } from '../../../src/api/contract.js';
import { statusOfCode } from '../../../src/errors/catalog.js';

describe('error catalogue', () => {
  it('when compared with openapi.yaml, then every code of the ErrorCode enum has a status and vice versa', () => {
    const schema = loadContract().components!.schemas!.ErrorCode as { enum: string[] };
    expect(Object.keys(statusOfCode).sort()).toEqual([...schema.enum].sort());
  });

  it("when compared with the API description's table, then each code is listed under its status", () => {
    const description = loadContract().info.description!;
    for (const [code, status] of Object.entries(statusOfCode)) {
      if (status === 422) continue;
      const row = description.split('\n').find((line) => line.startsWith(`| ${status} |`));
      expect(row, `row for ${status}`).toBeDefined();
      expect(row, `${code} listed under ${status}`).toContain(`\`${code}\``);
    }
  });
});
