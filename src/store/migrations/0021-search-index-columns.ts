import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Filterable and sortable columns of an indexed table: chosen per table (updateIndexedTable) and copied
 * into the search index with each row. Null: none chosen.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('index_tables', 'filterable_columns', { type: DataTypes.JSON, allowNull: true });
  await q.addColumn('index_tables', 'sortable_columns', { type: DataTypes.JSON, allowNull: true });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeColumn('index_tables', 'sortable_columns');
  await q.removeColumn('index_tables', 'filterable_columns');
}
