import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export class RequestLogModel extends Model<InferAttributes<RequestLogModel>, InferCreationAttributes<RequestLogModel>> {
  declare id: CreationOptional<number>;
  declare keyId: string | null;
  declare userId: string | null;
  /** `METHOD /path/template`, e.g. `POST /api/v1/search`. */
  declare endpoint: string;
  declare status: number;
  declare durationMs: number;
  declare rateLimited: boolean;
  /** False when the request did not count against the key's limit (exempt operations). */
  declare counted: boolean;
  declare createdAt: Date;

  static setup(sequelize: Sequelize): void {
    RequestLogModel.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        keyId: { type: DataTypes.STRING(40), allowNull: true },
        userId: { type: DataTypes.STRING(40), allowNull: true },
        endpoint: { type: DataTypes.STRING(120), allowNull: false },
        status: { type: DataTypes.INTEGER, allowNull: false },
        durationMs: { type: DataTypes.INTEGER, allowNull: false },
        rateLimited: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        counted: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        createdAt: { type: DataTypes.DATE, allowNull: false },
      },
      { sequelize, tableName: 'request_logs', underscored: true, updatedAt: false },
    );
  }
}
