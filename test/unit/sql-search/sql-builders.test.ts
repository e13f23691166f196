import { describe, expect, it } from 'vitest';
import { assertReadOnlySql, DIALECTS, MAX_RESULT_FIELD_CHARS, MAX_SEARCHED_TEXT_CHARS, MAX_SNIPPET_CHARS, type Engine, type FullTextIndexInfo } from '../../../src/connectors/index.js';
import { compileQuery } from '../../../src/search-core/query.js';
import { tableQueries } from '../../../src/sql-search/queries.js';
import type { SearchTarget } from '../../../src/sql-search/types.js';
import type { QueryNode } from '../../../src/search-core/boolean-query.js';
import { toTsquery } from '../../../src/sql-search/renderers.js';
import { candidateItems, LIVE_RANK_CANDIDATES, MAX_CANDIDATE_LISTS } from '../../../src/sql-search/sql-common.js';
import { withoutAdjacency } from '../../../src/sql-search/sql-postgres.js';

const table = `we"ird ta\`ble's [x]`;
const column = `ti"tle \`x\` ?`;
const hostile = `'; DROP TABLE t; -- " \` $1 ? :* <-> \\`;

function index(engine: Engine): FullTextIndexInfo {
  const base = { table, schema: engine === 'postgres' ? 'public' : null, name: 'ft', columns: [column, 'body'], expression: null, language: null, ftsTable: null, contentTable: null, contentRowid: null };
  if (engine === 'postgres') return { ...base, kind: 'gin_tsvector', expression: `to_tsvector('english'::regconfig, (("ti""tle \`x\` ?" || ' '::text) || COALESCE(body, ''::text)))`, language: 'english' };
  if (engine === 'mysql') return { ...base, kind: 'mysql_fulltext' };
  return { ...base, kind: 'fts5', ftsTable: `${table}_fts`, contentTable: table, contentRowid: 'id' };
}

const COLUMN_TYPES: Record<Engine, string[]> = {
  postgres: ['integer', 'character varying(200)', 'text'],
  mysql: ['int(11)', 'varchar(200)', 'longtext'],
  sqlite: ['INTEGER', 'TEXT', 'TEXT'],
};

/** The text column as each engine cuts it in SQL. */
function cut(engine: Engine, ref: string, chars: number): string {
  if (engine === 'postgres') return `left(${ref}::text, ${chars})`;
  if (engine === 'mysql') return `LEFT(${ref}, ${chars})`;
  return `CASE WHEN typeof(${ref}) IN ('text', 'blob') THEN substr(${ref}, 1, ${chars}) ELSE ${ref} END`;
}

/** The column a result shows, as the details statement must read it. */
const cutColumn = (engine: Engine) => `${cut(engine, `d.${DIALECTS[engine].quoteIdent(column)}`, MAX_RESULT_FIELD_CHARS)} AS c1`;

function target(engine: Engine, indexed: boolean): SearchTarget {
  return {
    engine, table, schema: engine === 'postgres' ? 'public' : null, columns: ['id', column, 'body'], columnTypes: COLUMN_TYPES[engine], keys: [{ name: 'id', pseudo: false }],
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
          expect(statements[1]!.sql).toContain(cutColumn(engine));
          // The fallback scan reads each text only as far as search reads it.
          if (!indexed) expect(statements[0]!.sql).toContain(`LOWER(${cut(engine, dialect.quoteIdent(column), MAX_SEARCHED_TEXT_CHARS)}) AS l0`);
        });
      }
    }
  }

  it('when a result is shown, then snippets and highlights are cut in SQL too: PostgreSQL headlines, FTS5 snippets and highlights', () => {
    const { query } = compileQuery('battery', 'natural');
    const pg = tableQueries(target('postgres', true), query, DIALECTS.postgres)!.details([[1]]);
    expect(pg.sql).toMatch(new RegExp(`AS c2, left\\(ts_headline\\(.*\\), ${MAX_SNIPPET_CHARS}\\) AS h0`));
    const fts = tableQueries(target('sqlite', true), query, DIALECTS.sqlite)!.details([[1]]);
    expect(fts.sql).toMatch(new RegExp(`substr\\(snippet\\(.*\\), 1, ${MAX_SNIPPET_CHARS}\\) AS quarry_snippet`));
    expect(fts.sql).toMatch(new RegExp(`substr\\(highlight\\(x\\.[^)]*, 0, \\?, \\?\\), 1, ${MAX_RESULT_FIELD_CHARS}\\) AS h0`));
  });

  it('when PostgreSQL searches in natural mode, then each word seeds a candidate list read through the index expression verbatim, and bound rows are ranked', () => {
    const { query } = compileQuery('battery cable', 'natural');
    const rank = tableQueries(target('postgres', true), query, DIALECTS.postgres, 300)!.rank(20, { from: 0, to: 20 });
    const expression = index('postgres').expression!;
    expect(rank.sql).toContain(`WHERE ${expression} @@ (SELECT to_tsquery($1::regconfig, $2)) LIMIT 301`);
    expect(rank.sql).toContain(`WHERE ${expression} @@ (SELECT to_tsquery($1::regconfig, $3)) LIMIT 301`);
    expect(rank.sql).toContain('ORDER BY n, c LIMIT 300');
    // The text is parsed once per candidate, and ranked by any word.
    expect(rank.sql.split(expression)).toHaveLength(4);
    expect(rank.params.slice(0, 4)).toEqual(['english', "('battery')", "('cable')", "('battery') | ('cable')"]);
  });

  it('when PostgreSQL searches a phrase, then the candidate list needs only its words (the index alone answers that) and the ranking checks adjacency', () => {
    const { query } = compileQuery('"noise cancelling" -"wired in" -cheap', 'natural');
    const rank = tableQueries(target('postgres', true), query, DIALECTS.postgres)!.rank(20, { from: 0, to: 20 });
    expect(rank.params).toContain("(('noise') & ('cancelling')) & (!('cheap'))");
    expect(rank.params).toContain("('noise' <-> 'cancelling')");
    expect(rank.params).toContain("(('noise' <-> 'cancelling')) & (!(('wired' <-> 'in'))) & (!('cheap'))");
  });

  it('when PostgreSQL searches a stored tsvector in boolean mode, then every match is ranked; an expression index ranks a bounded list', () => {
    const { query } = compileQuery('battery', 'boolean');
    const stored = { ...target('postgres', true), index: { ...index('postgres'), expression: '"tsv"' } };
    const everyMatch = tableQueries(stored, query, DIALECTS.postgres)!.rank(20, { from: 0, to: 20 });
    expect(everyMatch.sql).not.toContain('quarry_c');
    expect(everyMatch.sql).toContain('WHERE "tsv" @@ to_tsquery($1::regconfig, $3)');
    const bounded = tableQueries(target('postgres', true), query, DIALECTS.postgres)!.rank(20, { from: 0, to: 20 });
    expect(bounded.sql).toContain(`LIMIT ${LIVE_RANK_CANDIDATES + 1}`);
  });

  it('when MySQL searches in natural mode, then its words go to the engine\'s relevance order, cut at bound + 1, with quoted and excluded items in BOOLEAN MODE', () => {
    const { query } = compileQuery('wireless "noise cancelling" -wired', 'natural');
    const rank = tableQueries(target('mysql', true), query, DIALECTS.mysql, 300)!.rank(20, { from: 0, to: 20 });
    const match = 'MATCH(t.`ti"tle ``x`` ?`, t.`body`)';
    expect(rank.sql).toContain(`WHERE ${match} AGAINST(? IN NATURAL LANGUAGE MODE) AND ${match} AGAINST(? IN BOOLEAN MODE) LIMIT 301)`);
    expect(rank.sql).toContain('WHERE c.quarry_n <= 300');
    expect(rank.params).toEqual(['wireless noise cancelling', 'wireless noise cancelling', '+"noise cancelling" -wired']);
    const excluded = tableQueries(target('mysql', true), compileQuery('wireless -wired', 'natural').query, DIALECTS.mysql)!.rank(20, { from: 0, to: 20 });
    expect(excluded.sql).toContain(`AND NOT ${match} AGAINST(? IN BOOLEAN MODE)`);
    expect(excluded.params).toEqual(['wireless', 'wireless', '+wired']);
  });

  it('when SQLite searches in natural mode, then each word seeds a list with the quoted and excluded items, and bm25 scores only the candidates', () => {
    const { query } = compileQuery('wireless cable -wired', 'natural');
    const rank = tableQueries(target('sqlite', true), query, DIALECTS.sqlite, 300)!.rank(20, { from: 0, to: 20 });
    expect(rank.params).toEqual(['(("wireless")) NOT ("wired")', '(("cable")) NOT ("wired")', '("wireless") OR ("cable")']);
    expect(rank.sql).toContain('LIMIT 301');
    expect(rank.sql).toContain('AND +x.rowid IN (SELECT c FROM quarry_c)');
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
    const { likePattern } = await import('../../../src/sql-search/sql-like.js');
    expect(likePattern('100%_Off!')).toBe('%100!%!_off!!%');
  });
});

describe('candidateItems', () => {
  it('when a query has more items than there are lists, then the rest share the last list', () => {
    const items = Array.from({ length: MAX_CANDIDATE_LISTS + 3 }, (_, i): QueryNode => ({ kind: 'term', word: `w${i}`, prefix: false }));
    const lists = candidateItems(items);
    expect(lists).toHaveLength(MAX_CANDIDATE_LISTS);
    expect(lists.at(-1)).toEqual({ kind: 'or', children: items.slice(MAX_CANDIDATE_LISTS - 1) });
    expect(candidateItems(items.slice(0, 2))).toEqual(items.slice(0, 2));
  });
});

describe('decoding a bounded ranking', () => {
  const queries = () => tableQueries(target('sqlite', true), compileQuery('wireless cable', 'natural').query, DIALECTS.sqlite, 2)!;
  const window = { from: 0, to: 0 };

  it('when the lists found more rows than the bound, then the ranking is approximate and its total a lower bound', () => {
    const rows = [1, 2].map((k, i) => ({ k0: k, quarry_score: 2 - i, quarry_total: 2, quarry_pos: i + 1, quarry_found: 3 }));
    expect(queries().decodeRanking(rows, window)).toMatchObject({ total: 2, totalIsEstimate: true, approximate: true });
  });

  it('when the lists found no more than the bound, then the ranking is exact', () => {
    const rows = [{ k0: 7, quarry_score: 1, quarry_total: 1, quarry_pos: 1, quarry_found: 2 }];
    expect(queries().decodeRanking(rows, window)).toMatchObject({ total: 1, totalIsEstimate: false, approximate: false });
  });

  it('when no candidate matched, then the figures row alone says whether the bound was reached', () => {
    const row = { k0: null, quarry_score: null, quarry_total: null, quarry_pos: null, quarry_found: 3 };
    expect(queries().decodeRanking([row], window)).toEqual({ rows: [], total: 0, totalIsEstimate: true, approximate: true });
    expect(queries().decodeRanking([{ ...row, quarry_found: 0 }], window)).toEqual({ rows: [], total: 0, totalIsEstimate: false, approximate: false });
  });
});

describe('withoutAdjacency', () => {
  it('when a tree holds phrases, then they become their words and excluded phrases are dropped', () => {
    const tree = compileQuery('"a b" c -"d e" -f', 'boolean').query.root!;
    expect(toTsquery(withoutAdjacency(tree))).toBe("(('a') & ('b')) & ('c') & (!('f'))");
  });
});
