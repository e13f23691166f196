import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { settings } from '../../../src/config/settings.js';

describe('README configuration table', () => {
  it('when read, then it lists every setting with its default and meaning', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    for (const setting of settings) {
      expect(readme, setting.name).toContain(`| \`${setting.name}\` | ${setting.default} | ${setting.meaning} |`);
    }
  });

  it('when the config parser reads the environment, then every variable it reads is a documented setting', () => {
    const source = readFileSync(new URL('../../../src/config/config.ts', import.meta.url), 'utf8');
    const read = [...source.matchAll(/(?:read|int|bool|oneOf|list|origins)\('([A-Z_]+)'/g)].map((match) => match[1]);
    const documented = settings.map((setting) => setting.name);
    for (const name of new Set(read)) expect(documented, name).toContain(name);
  });
});
