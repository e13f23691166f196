import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** One block of a key: when it started, why, until when, and how many requests it refused. */
export class RateLimitViolationModel extends Model<InferAttributes<RateLimitViolationModel>, InferCreationAttributes<RateLimitViolationModel>> {
  declare id: CreationOptional<number>;
  declare keyId: string;
  declare reason: string;
  declare startedAt: Date;
  declare blockedUntil: Date;
  declare affectedRequests: number;

  static setup(sequelize: Sequelize): void {
    RateLimitViolationModel.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        keyId: { type: DataTypes.STRING(40), allowNull: false },
        reason: { type: DataTypes.STRING(200), allowNull: false },
        startedAt: { type: DataTypes.DATE, allowNull: false },
        blockedUntil: { type: DataTypes.DATE, allowNull: false },
        affectedRequests: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
      },
      { sequelize, tableName: 'rate_limit_violations', underscored: true, timestamps: false },
    );
  }
}
