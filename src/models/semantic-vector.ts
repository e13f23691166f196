import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** The embedding of one source row (issue 7): unit-length little-endian float32 in a BLOB / bytea. */
export class SemanticVectorModel extends Model<InferAttributes<SemanticVectorModel>, InferCreationAttributes<SemanticVectorModel>> {
  declare id: CreationOptional<number>;
  declare connectionId: string;
  declare tableName: string;
  /** JSON object of the row's primary key column(s) and value(s), in key order. */
  declare primaryKey: string;
  declare contentHash: string;
  declare providerId: string;
  declare vector: Buffer;
  /** The last index job that saw the row in the source table. */
  declare jobId: string;
  declare updatedAt: CreationOptional<Date>;

  static setup(sequelize: Sequelize): void {
    SemanticVectorModel.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        connectionId: { type: DataTypes.STRING(40), allowNull: false },
        tableName: { type: DataTypes.STRING(255), allowNull: false },
        primaryKey: { type: DataTypes.TEXT, allowNull: false },
        contentHash: { type: DataTypes.STRING(64), allowNull: false },
        providerId: { type: DataTypes.STRING(200), allowNull: false },
        vector: { type: DataTypes.BLOB, allowNull: false },
        jobId: { type: DataTypes.STRING(40), allowNull: false },
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'semantic_vectors', underscored: true, createdAt: false },
    );
  }
}
