import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export type IndexJobStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
/** What queued the job: a new connection, a caller, the connection's schedule, or a change of the table's settings. */
export type IndexJobTrigger = 'connect' | 'manual' | 'schedule' | 'settings' | 'upload' | 'reconcile';

/** One sync of a connection's table into the search index. */
export class IndexJobModel extends Model<InferAttributes<IndexJobModel>, InferCreationAttributes<IndexJobModel>> {
  declare id: string;
  declare connectionId: string;
  declare tableName: string;
  /** The search space the job writes (space-name of the connection's user and environment). */
  declare space: string;
  declare trigger: IndexJobTrigger;
  declare status: IndexJobStatus;
  /** Whether rows are embedded for semantic search, and with which model. */
  declare semantic: CreationOptional<boolean>;
  declare providerId: CreationOptional<string | null>;
  /** Most rows of the table this job indexes (the owner's plan), in primary key order. */
  declare rowLimit: number;
  declare rowsTotal: CreationOptional<number | null>;
  declare rowsDone: CreationOptional<number>;
  declare rowsWritten: CreationOptional<number>;
  declare rowsEmbedded: CreationOptional<number>;
  declare rowsSkipped: CreationOptional<number>;
  declare rowsDeleted: CreationOptional<number>;
  /** Rows left out because a value or the row was larger than a sync reads. */
  declare rowsOversize: CreationOptional<number>;
  /** Times a process claimed the job; a stop that hands it back does not count. */
  declare attempts: CreationOptional<number>;
  declare truncated: CreationOptional<boolean>;
  /** JSON array of the primary key values of the last row written. */
  declare cursor: CreationOptional<string | null>;
  declare error: CreationOptional<{ code: string; message: string } | null>;
  declare heartbeatAt: CreationOptional<Date | null>;
  declare resumedAt: CreationOptional<Date | null>;
  declare rowsAtResume: CreationOptional<number>;
  declare startedAt: CreationOptional<Date | null>;
  declare finishedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static setup(sequelize: Sequelize): void {
    IndexJobModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        connectionId: { type: DataTypes.STRING(40), allowNull: false },
        tableName: { type: DataTypes.STRING(255), allowNull: false },
        space: { type: DataTypes.STRING(80), allowNull: false },
        trigger: { type: DataTypes.STRING(16), allowNull: false },
        status: { type: DataTypes.STRING(16), allowNull: false },
        semantic: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        providerId: { type: DataTypes.STRING(200), allowNull: true },
        rowLimit: { type: DataTypes.INTEGER, allowNull: false },
        rowsTotal: { type: DataTypes.INTEGER, allowNull: true },
        rowsDone: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        rowsWritten: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        rowsEmbedded: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        rowsSkipped: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        rowsDeleted: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        rowsOversize: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        truncated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        cursor: { type: DataTypes.TEXT, allowNull: true },
        error: { type: DataTypes.JSON, allowNull: true },
        heartbeatAt: { type: DataTypes.DATE, allowNull: true },
        resumedAt: { type: DataTypes.DATE, allowNull: true },
        rowsAtResume: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        startedAt: { type: DataTypes.DATE, allowNull: true },
        finishedAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'index_jobs', underscored: true },
    );
  }
}
