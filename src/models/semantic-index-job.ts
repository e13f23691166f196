import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export type SemanticJobStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

/** One run of semantic indexing over a connection's table (issue 7). */
export class SemanticIndexJobModel extends Model<InferAttributes<SemanticIndexJobModel>, InferCreationAttributes<SemanticIndexJobModel>> {
  declare id: string;
  declare connectionId: string;
  declare tableName: string;
  declare status: SemanticJobStatus;
  /** Embedding provider and model the job embeds with, e.g. `local:universal-sentence-encoder-lite@0.2.0`. */
  declare providerId: string;
  /** Most rows of the table this job indexes (the owner's tier, by primary key order). */
  declare rowLimit: number;
  declare rowsTotal: CreationOptional<number | null>;
  declare rowsDone: CreationOptional<number>;
  declare rowsEmbedded: CreationOptional<number>;
  declare rowsSkipped: CreationOptional<number>;
  declare rowsDeleted: CreationOptional<number>;
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
    SemanticIndexJobModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        connectionId: { type: DataTypes.STRING(40), allowNull: false },
        tableName: { type: DataTypes.STRING(255), allowNull: false },
        status: { type: DataTypes.STRING(16), allowNull: false },
        providerId: { type: DataTypes.STRING(200), allowNull: false },
        rowLimit: { type: DataTypes.INTEGER, allowNull: false },
        rowsTotal: { type: DataTypes.INTEGER, allowNull: true },
        rowsDone: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        rowsEmbedded: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        rowsSkipped: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        rowsDeleted: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
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
      { sequelize, tableName: 'semantic_index_jobs', underscored: true },
    );
  }
}
