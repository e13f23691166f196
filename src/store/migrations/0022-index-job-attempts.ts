import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * What a sync left out and how often it was tried: rows too large to read are counted (rows_oversize), and every
 * claim of a job is counted (attempts), so a job whose process dies each time it runs ends failed instead of being
 * resumed by every start.
 */
export async function up(q: QueryInterface): Promise<void> {
  await q.addColumn('index_jobs', 'rows_oversize', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
  await q.addColumn('index_jobs', 'attempts', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
}

export async function down(q: QueryInterface): Promise<void> {
  await q.removeColumn('index_jobs', 'attempts');
  await q.removeColumn('index_jobs', 'rows_oversize');
}
