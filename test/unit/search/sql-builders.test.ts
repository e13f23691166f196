import { describe, expect, it } from 'vitest';
import { assertReadOnlySql, DIALECTS, type Engine, type FullTextIndexInfo } from '../../../src/connectors/index.js';
import { compileQuery, tableQueries } from '../../../src/search/queries.js';
import type { SearchTarget } from '../../../src/search/types.js';
import { aliases } from '../../../src/search/sql-common.js';

const table = `we"ird ta\`ble's [x]`;
const column = `ti"tle \`x\` ?`;
const hostile = `'; DROP TABLE t; -- " \` $1 ? :* <-> \\`;

function index(engine: Engine): FullTextIndexInfo {
  const base = { table, schema: engine === 'postgres' ? 'public' : null, name: 'ft', columns: [column, 'body'], expression: null, language: null, ftsTable: null, contentTable: null, contentRowid: null };
  if (engine === 'postgres') return { ...base, kind: 'gin_tsvector', expression: `to_tsvector('english'::regconfig, (("ti""tle \`x\` ?" || ' '::text) || COALESCE(body, ''::text)))`, language: 'english' };
  if (engine === 'mysql') return { ...base, kind: 'mysql_fulltext' };
  return { ...base, kind: 'fts5', ftsTable: `${table}_fts`, contentTable: table, contentRowid: 'id' };
}

function target(engine: Engine, indexed: boolean): SearchTarget {
  return {
    engine, table, schema: engine === 'postgres' ? 'public' : null, columns: ['id', column, 'body'], keys: [{ name: 'id', pseudo: false }],
    searchColumns: [column, 'body'], index: indexed ? index(engine) : null, ftsColumns: [column, 'body'], rowEstimate: 10,
  };
}

const placeholders = (sql: string, engine: Engine) =>
  engine === 'postgres' ? new Set(sql.match(/\$\d+/g)).size : (sql.replace(/"(?:[^"]|"")*"|`(?:[^`]|``)*`|'(?:[^']|'')*'/g, '').match(/\?/g) ?? []).length;

describe('statement builders', () => {
  for (const engine of ['postgres', 'mysql', 'sqlite'] as const) {
    for (const indexed of [true, false]) {
      for (const mode of ['natural', 'boolean'] as const) {
        it(`when ${engine} ${indexed ? 'with' : 'without'} an index searches in ${mode} mode, then names are quoted, the query is bound and the statement is one read-only SELECT`, () => {
          const dialect = DIALECTS[engine];
          const { query } = compileQuery(`${hostile} battery`, mode);
          const queries = tableQueries(target(engine, indexed), query, dialect)!;
          const statements = [queries.rank(40, { from: 20, to: 40 }), queries.details([[1], [2]])];
          for (const statement of statements) {
            expect(() => assertReadOnlySql(statement.sql, engine)).not.toThrow();
            expect(statement.sql).not.toContain('DROP');
            expect(statement.sql).not.toContain('battery');
            expect(placeholders(statement.sql, engine)).toBe(statement.params.length);
          }
          expect(statements[0]!.sql).toContain(dialect.quoteIdent(indexed && engine === 'sqlite' ? `${table}_fts` : table));
          expect(statements[0]!.sql).toMatch(/LIMIT 40\b/);
          expect(statements[1]!.sql).toContain(`${dialect.quoteIdent(column)} AS c1`);
        });
      }
    }
  }

  it('when PostgreSQL has an index, then the WHERE repeats its expression verbatim so the planner uses it', () => {
    const { query } = compileQuery('battery', 'natural');
    const rank = tableQueries(target('postgres', true), query, DIALECTS.postgres)!.rank(20, { from: 0, to: 20 });
    expect(rank.sql).toContain(`WHERE ${index('postgres').expression} @@ websearch_to_tsquery($2::regconfig, $1)`);
    expect(rank.params.slice(0, 2)).toEqual(['battery', 'english']);
  });

  it('when PostgreSQL ranks the same table again, then the statement is the one built before, bound to each query\'s own text', () => {
    const shared = target('postgres', true);
    const rank = (text: string, mode: 'natural' | 'boolean', top = 20) =>
      tableQueries(shared, compileQuery(text, mode).query, DIALECTS.postgres)!.rank(top, { from: 0, to: top });
    const first = rank('battery', 'natural');
    const second = rank('charger cable', 'natural');
    expect(second.sql).toBe(first.sql);
    expect(first.params).toEqual(['battery', 'english', expect.any(String)]);
    expect(second.params).toEqual(['charger cable', 'english', first.params[2]]);
    // Another mode or another page size is another statement, never a remembered one with the wrong shape.
    const boolean = rank('+battery', 'boolean');
    expect(boolean.sql).toContain('to_tsquery($2::regconfig, $1)');
    expect(boolean.sql).not.toContain('websearch_to_tsquery');
    expect(boolean.params[0]).toBe("'battery'");
    expect(rank('battery', 'natural', 40).sql).toMatch(/LIMIT 40\b/);
    // The same text in another table (another target object) is built for that table.
    const other = { ...shared, table: 'other' };
    expect(tableQueries(other, compileQuery('battery', 'natural').query, DIALECTS.postgres)!.rank(20, { from: 0, to: 20 }).sql).toContain('"public"."other"');
  });

  it('when MySQL ranks the same table again, then the statement is the one built before, its text bound in both places', () => {
    const shared = target('mysql', true);
    const rank = (text: string, mode: 'natural' | 'boolean') =>
      tableQueries(shared, compileQuery(text, mode).query, DIALECTS.mysql)!.rank(20, { from: 0, to: 20 });
    const first = rank('battery', 'natural');
    const second = rank('charger', 'natural');
    expect(second.sql).toBe(first.sql);
    expect(first.params).toEqual(['battery', 'battery']);
    expect(second.params).toEqual(['charger', 'charger']);
    expect(rank('+battery', 'boolean').sql).toContain('IN BOOLEAN MODE');
  });

  it('when MySQL has a FULLTEXT index, then MATCH names exactly its columns in index order', () => {
    const { query } = compileQuery('+battery', 'boolean');
    const rank = tableQueries(target('mysql', true), query, DIALECTS.mysql)!.rank(20, { from: 0, to: 20 });
    expect(rank.sql).toContain('MATCH(t.`ti"tle ``x`` ?`, t.`body`) AGAINST(? IN BOOLEAN MODE)');
    expect(rank.params).toEqual(['+battery', '+battery']);
  });

  it('when the query leaves nothing to search on an engine, then no statement is built', () => {
    expect(tableQueries(target('mysql', true), compileQuery('the', 'boolean').query, DIALECTS.mysql)).toBeNull();
    expect(tableQueries(target('sqlite', true), compileQuery('!!!', 'boolean').query, DIALECTS.sqlite)).toBeNull();
  });
});

describe('likePattern', () => {
  it("when the text holds LIKE's own characters, then they are escaped with '!' and the text is lower case", async () => {
    const { likePattern } = await import('../../../src/search/sql-like.js');
    expect(likePattern('100%_Off!')).toBe('%100!%!_off!!%');
  });
});

describe('aliases', () => {
  it('when two prefix and count pairs would spell the same name, then each gets its own list', () => {
    expect(aliases('h', 11)).toHaveLength(11);
    expect(aliases('h1', 1)).toEqual(['h10']);
    expect(aliases('h', 11)).toBe(aliases('h', 11));
  });
});
