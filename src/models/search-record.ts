import { DataTypes, Model, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { components } from '../../generated/openapi.js';

type SearchMode = components['schemas']['SearchMode'];

/** A table searched without a full-text index (the search fell back to a bounded scan). */
export interface UnindexedTable {
  databaseId: string;
  table: string;
}

/** One search, as the search service ran it: feeds history, trends and every analytics figure. */
export class SearchRecordModel extends Model<InferAttributes<SearchRecordModel>, InferCreationAttributes<SearchRecordModel>> {
  declare id: string;
  declare userId: string;
  declare keyId: string | null;
  declare query: string;
  declare searchMode: SearchMode;
  /** Connection ids the search ran on. */
  declare databases: string[];
  /** Names of the tables the search read (the analytics' "categories"); null when unknown. */
  declare tables: string[] | null;
  declare resultCount: number;
  declare responseTimeMs: number;
  declare status: 'ok' | 'partial' | 'error';
  declare unindexedTables: UnindexedTable[] | null;
  declare createdAt: Date;

  static setup(sequelize: Sequelize): void {
    SearchRecordModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        userId: { type: DataTypes.STRING(40), allowNull: false },
        keyId: { type: DataTypes.STRING(40), allowNull: true },
        query: { type: DataTypes.STRING(500), allowNull: false },
        searchMode: { type: DataTypes.STRING(16), allowNull: false },
        databases: { type: DataTypes.JSON, allowNull: false },
        tables: { type: DataTypes.JSON, allowNull: true },
        resultCount: { type: DataTypes.INTEGER, allowNull: false },
        responseTimeMs: { type: DataTypes.INTEGER, allowNull: false },
        status: { type: DataTypes.STRING(16), allowNull: false },
        unindexedTables: { type: DataTypes.JSON, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false },
      },
      { sequelize, tableName: 'search_records', underscored: true, updatedAt: false },
    );
  }
}
