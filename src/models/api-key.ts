import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { components } from '../../generated/openapi.js';

type Permission = components['schemas']['Permission'];
type Tier = components['schemas']['RateLimitTier'];
type Environment = components['schemas']['Environment'];
type KeyType = components['schemas']['KeyType'];

export class ApiKeyModel extends Model<InferAttributes<ApiKeyModel>, InferCreationAttributes<ApiKeyModel>> {
  declare id: string;
  declare userId: string;
  declare name: string;
  /** `secret` (quarry_sk_, for servers) or `publishable` (quarry_pk_, for web pages). */
  declare kind: CreationOptional<KeyType>;
  /** Non-secret lookup id, the 8 characters after `quarry_sk_<env>_` (or `quarry_pk_<env>_`). */
  declare publicId: string;
  /** HMAC-SHA-256 (server pepper) of the whole key, hex. A secret key itself is never stored. */
  declare secretHash: string;
  /** A publishable key's full value: public by design, so it is kept and listed. Null on secret keys. */
  declare publishableKey: CreationOptional<string | null>;
  /** Publishable keys: the origins (as browsers send `Origin`) whose pages may use the key. */
  declare allowedOrigins: CreationOptional<string[] | null>;
  /** Publishable keys: the connections the key may search. */
  declare databaseIds: CreationOptional<string[] | null>;
  /** Publishable keys: only these tables of those connections; null or empty means all. */
  declare tableNames: CreationOptional<string[] | null>;
  /** Publishable keys: requests per client IP per hour; null means the tier's default. */
  declare requestsPerIpPerHour: CreationOptional<number | null>;
  declare environment: Environment;
  declare permissions: Permission[];
  declare tier: Tier;
  declare customLimits: Record<string, number> | null;
  /** The owner's id on the key made by management setup (unique), null on every other key. */
  declare initialForUser: CreationOptional<string | null>;
  declare expiresAt: Date | null;
  declare revokedAt: CreationOptional<Date | null>;
  declare replacedById: CreationOptional<string | null>;
  declare lastUsedAt: CreationOptional<Date | null>;
  declare usageCount: CreationOptional<number>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static setup(sequelize: Sequelize): void {
    ApiKeyModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        userId: { type: DataTypes.STRING(40), allowNull: false },
        name: { type: DataTypes.STRING(100), allowNull: false },
        kind: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'secret' },
        publicId: { type: DataTypes.STRING(16), allowNull: false, unique: true },
        secretHash: { type: DataTypes.STRING(64), allowNull: false },
        publishableKey: { type: DataTypes.STRING(80), allowNull: true },
        allowedOrigins: { type: DataTypes.JSON, allowNull: true },
        databaseIds: { type: DataTypes.JSON, allowNull: true },
        tableNames: { type: DataTypes.JSON, allowNull: true },
        requestsPerIpPerHour: { type: DataTypes.INTEGER, allowNull: true },
        environment: { type: DataTypes.STRING(8), allowNull: false },
        permissions: { type: DataTypes.JSON, allowNull: false },
        tier: { type: DataTypes.STRING(16), allowNull: false },
        customLimits: { type: DataTypes.JSON, allowNull: true },
        initialForUser: { type: DataTypes.STRING(40), allowNull: true, unique: true },
        expiresAt: { type: DataTypes.DATE, allowNull: true },
        revokedAt: { type: DataTypes.DATE, allowNull: true },
        replacedById: { type: DataTypes.STRING(40), allowNull: true },
        lastUsedAt: { type: DataTypes.DATE, allowNull: true },
        usageCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'api_keys', underscored: true },
    );
  }
}
