import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/**
 * API-key requests counted per key, endpoint and UTC minute (`request_usage_minutely`). Every reader of key usage
 * and rate-limit analytics wants counts and averages over a minute or coarser, so the minute is the record: a busy
 * key writes a few rows a minute instead of one per request (see UsageRecorder).
 */
export class RequestUsageModel extends Model<InferAttributes<RequestUsageModel>, InferCreationAttributes<RequestUsageModel>> {
  declare id: CreationOptional<number>;
  declare keyId: string;
  declare userId: string | null;
  /** `METHOD /path/template`, e.g. `POST /api/v1/search`. */
  declare endpoint: string;
  /** Start of the UTC minute the requests arrived in. */
  declare minuteStart: Date;
  declare requests: number;
  /** Answered with a status of 400 or more. */
  declare failed: number;
  /** Refused by the rate limiter. */
  declare rateLimited: number;
  /** Admitted and counted against the key's limit (not refused, not exempt). */
  declare counted: number;
  /** Sum of the requests' durations, for averages. */
  declare totalMs: number;

  static setup(sequelize: Sequelize): void {
    RequestUsageModel.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
        keyId: { type: DataTypes.STRING(40), allowNull: false },
        userId: { type: DataTypes.STRING(40), allowNull: true },
        endpoint: { type: DataTypes.STRING(120), allowNull: false },
        minuteStart: { type: DataTypes.DATE, allowNull: false },
        requests: { type: DataTypes.INTEGER, allowNull: false },
        failed: { type: DataTypes.INTEGER, allowNull: false },
        rateLimited: { type: DataTypes.INTEGER, allowNull: false },
        counted: { type: DataTypes.INTEGER, allowNull: false },
        totalMs: { type: DataTypes.BIGINT, allowNull: false },
      },
      { sequelize, tableName: 'request_usage_minutely', underscored: true, timestamps: false },
    );
  }
}
