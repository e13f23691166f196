import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export interface SyncedColumns {
  filterable: string[];
  sortable: string[];
}

/** A table of a connection that is in Quarry's search index, with its settings and last sync. */
export class IndexTableModel extends Model<InferAttributes<IndexTableModel>, InferCreationAttributes<IndexTableModel>> {
  /** Also the table's `src` in the index: an id Quarry made. */
  declare id: string;
  declare connectionId: string;
  declare tableName: string;
  declare semantic: CreationOptional<boolean>;
  declare keyColumns: CreationOptional<string[] | null>;
  declare textColumns: CreationOptional<string[] | null>;
  /** Columns searches may filter and facet by, and sort by. */
  declare filterableColumns: CreationOptional<string[] | null>;
  declare sortableColumns: CreationOptional<string[] | null>;
  /** The filterable and sortable columns the rows in the index were last written with (null before a sync). */
  declare syncedColumns: CreationOptional<SyncedColumns | null>;
  declare rows: CreationOptional<number>;
  declare truncated: CreationOptional<boolean>;
  declare vectorModel: CreationOptional<string | null>;
  declare syncedAt: CreationOptional<Date | null>;
  declare syncStartedAt: CreationOptional<Date | null>;
  /** Poll mode: the column whose value grows with every change of a row (null: the table follows full syncs only). */
  declare changeColumn: CreationOptional<string | null>;
  declare pollIntervalSeconds: CreationOptional<number | null>;
  /** Stream mode (PostgreSQL): the table follows the connection's logical replication slot; `changeCursor` is its position. */
  declare changeStream: CreationOptional<boolean>;
  /** JSON of the change column's value (as text) the next poll reads from, ties included. */
  declare changeCursor: CreationOptional<string | null>;
  /** Every change committed at the source before this moment is in the index (the last successful poll's start). */
  declare changesAsOf: CreationOptional<Date | null>;
  declare changeError: CreationOptional<{ code: string; message: string } | null>;
  /** The process polling the table now, and its heartbeat: a stale one is taken over. */
  declare pollOwner: CreationOptional<string | null>;
  declare pollHeartbeatAt: CreationOptional<Date | null>;
  declare nextPollAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static setup(sequelize: Sequelize): void {
    IndexTableModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        connectionId: { type: DataTypes.STRING(40), allowNull: false },
        tableName: { type: DataTypes.STRING(255), allowNull: false },
        semantic: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        keyColumns: { type: DataTypes.JSON, allowNull: true },
        textColumns: { type: DataTypes.JSON, allowNull: true },
        filterableColumns: { type: DataTypes.JSON, allowNull: true },
        sortableColumns: { type: DataTypes.JSON, allowNull: true },
        syncedColumns: { type: DataTypes.JSON, allowNull: true },
        rows: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        truncated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        vectorModel: { type: DataTypes.STRING(200), allowNull: true },
        syncedAt: { type: DataTypes.DATE, allowNull: true },
        syncStartedAt: { type: DataTypes.DATE, allowNull: true },
        changeColumn: { type: DataTypes.STRING(255), allowNull: true },
        pollIntervalSeconds: { type: DataTypes.INTEGER, allowNull: true },
        changeStream: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
        changeCursor: { type: DataTypes.TEXT, allowNull: true },
        changesAsOf: { type: DataTypes.DATE, allowNull: true },
        changeError: { type: DataTypes.JSON, allowNull: true },
        pollOwner: { type: DataTypes.STRING(40), allowNull: true },
        pollHeartbeatAt: { type: DataTypes.DATE, allowNull: true },
        nextPollAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'index_tables', underscored: true },
    );
  }
}
