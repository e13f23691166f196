import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { environmentSchema, settingDoc } from '../../../src/config/config.js';

/** The rows of the README's configuration table: variable name, default and meaning as written. */
function readmeTable(): Map<string, { default: string; meaning: string }> {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8').split('\n');
  const header = readme.indexOf('| Variable | Default | Meaning |');
  expect(header, 'the configuration table').toBeGreaterThan(-1);
  const rows = new Map<string, { default: string; meaning: string }>();
  for (const line of readme.slice(header + 2)) {
    const cells = /^\| `([A-Z0-9_]+)` \| (.+?) \| (.+) \|$/.exec(line);
    if (!cells) break;
    rows.set(cells[1]!, { default: cells[2]!, meaning: cells[3]! });
  }
  return rows;
}

describe('README configuration table', () => {
  it('when compared with the configuration schema, then it lists exactly the variables the schema reads', () => {
    expect([...readmeTable().keys()].sort()).toEqual(Object.keys(environmentSchema.shape).sort());
  });

  it("when a variable is listed, then its default and meaning are the schema's own", () => {
    const table = readmeTable();
    for (const name of Object.keys(environmentSchema.shape) as Array<keyof typeof environmentSchema.shape>) {
      const { default: fallback, meaning } = settingDoc(name);
      expect(table.get(name), name).toEqual({ default: fallback, meaning });
    }
  });
});
