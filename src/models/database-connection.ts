import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { components } from '../../generated/openapi.js';

type Engine = components['schemas']['DatabaseEngine'];
type Environment = components['schemas']['Environment'];
type TableSchema = components['schemas']['TableSchema'];

export class DatabaseConnectionModel extends Model<InferAttributes<DatabaseConnectionModel>, InferCreationAttributes<DatabaseConnectionModel>> {
  declare id: string;
  declare userId: string;
  declare name: string;
  declare engine: Engine;
  declare host: string | null;
  declare port: number | null;
  declare database: string;
  declare username: string | null;
  /** AES-256-GCM ciphertext (src/crypto/credentials.ts); the plain password is never stored. */
  declare passwordEncrypted: string | null;
  declare ssl: boolean;
  declare environment: Environment;
  declare tables: string[] | null;
  declare status: CreationOptional<'connected' | 'disconnected' | 'error'>;
  declare lastTestedAt: CreationOptional<Date | null>;
  declare lastError: CreationOptional<{ code: string; message: string } | null>;
  declare schemaCache: CreationOptional<TableSchema[] | null>;
  declare schemaDiscoveredAt: CreationOptional<Date | null>;
  /** Whether the connection's tables are copied into Quarry's search index (else every search is answered live). */
  declare indexEnabled: CreationOptional<boolean>;
  /** Minutes between scheduled syncs of its indexed tables; null: only when asked. */
  declare syncIntervalMinutes: CreationOptional<number | null>;
  declare nextSyncAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static setup(sequelize: Sequelize): void {
    DatabaseConnectionModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        userId: { type: DataTypes.STRING(40), allowNull: false },
        name: { type: DataTypes.STRING(100), allowNull: false },
        engine: { type: DataTypes.STRING(16), allowNull: false },
        host: { type: DataTypes.STRING(253), allowNull: true },
        port: { type: DataTypes.INTEGER, allowNull: true },
        database: { type: DataTypes.STRING(255), allowNull: false },
        username: { type: DataTypes.STRING(128), allowNull: true },
        passwordEncrypted: { type: DataTypes.TEXT, allowNull: true },
        ssl: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        environment: { type: DataTypes.STRING(8), allowNull: false },
        tables: { type: DataTypes.JSON, allowNull: true },
        status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'disconnected' },
        lastTestedAt: { type: DataTypes.DATE, allowNull: true },
        lastError: { type: DataTypes.JSON, allowNull: true },
        schemaCache: { type: DataTypes.JSON, allowNull: true },
        schemaDiscoveredAt: { type: DataTypes.DATE, allowNull: true },
        indexEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        syncIntervalMinutes: { type: DataTypes.INTEGER, allowNull: true, defaultValue: 60 },
        nextSyncAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'database_connections', underscored: true },
    );
  }
}
