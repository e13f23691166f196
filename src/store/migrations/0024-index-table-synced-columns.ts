import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The filterable and sortable columns a table's rows were last written with. Settings may change while a sync runs;
 * comparing the two tells whether the index already carries the chosen columns (`columnsReady`) and whether a sync
 * that writes them is still owed.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('index_tables', 'synced_columns', { type: DataTypes.JSON, allowNull: true });
  // Tables synced before this column existed were written with their settings of the time; the best knowledge is
  // that those are today's (otherwise every filter would wait for the next sync).
  const set = q.sequelize.getDialect() === 'postgres'
    ? `json_build_object('filterable', COALESCE(filterable_columns, '[]'::json), 'sortable', COALESCE(sortable_columns, '[]'::json))`
    : `json_object('filterable', json(COALESCE(filterable_columns, '[]')), 'sortable', json(COALESCE(sortable_columns, '[]')))`;
  await q.sequelize.query(`UPDATE index_tables SET synced_columns = ${set} WHERE synced_at IS NOT NULL`);
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeColumn('index_tables', 'synced_columns');
}
