import { DataTypes, Model, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** An account's uploaded SQLite file: the version its name holds now. */
export class SqliteFileModel extends Model<InferAttributes<SqliteFileModel>, InferCreationAttributes<SqliteFileModel>> {
  declare userId: string;
  declare name: string;
  declare version: string;
  declare sizeBytes: number;
  declare sha256: string;
  declare chunks: number;
  declare uploadedAt: Date;

  static setup(sequelize: Sequelize): void {
    SqliteFileModel.init(
      {
        userId: { type: DataTypes.STRING(40), primaryKey: true },
        name: { type: DataTypes.STRING(100), primaryKey: true },
        version: { type: DataTypes.STRING(40), allowNull: false },
        // BIGINT comes back as a string from PostgreSQL: read as a number (files stay far below 2^53 bytes).
        sizeBytes: { type: DataTypes.BIGINT, allowNull: false, get() { return Number(this.getDataValue('sizeBytes')); } },
        sha256: { type: DataTypes.STRING(64), allowNull: false },
        chunks: { type: DataTypes.INTEGER, allowNull: false },
        uploadedAt: { type: DataTypes.DATE, allowNull: false },
      },
      { sequelize, tableName: 'uploaded_files', underscored: true, timestamps: false },
    );
  }
}

/** One piece of a version's bytes, in order by `seq`. */
export class SqliteFileChunkModel extends Model<InferAttributes<SqliteFileChunkModel>, InferCreationAttributes<SqliteFileChunkModel>> {
  declare version: string;
  declare seq: number;
  declare data: Buffer;
  declare createdAt: Date;

  static setup(sequelize: Sequelize): void {
    SqliteFileChunkModel.init(
      {
        version: { type: DataTypes.STRING(40), primaryKey: true },
        seq: { type: DataTypes.INTEGER, primaryKey: true },
        data: { type: DataTypes.BLOB, allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false },
      },
      { sequelize, tableName: 'uploaded_file_chunks', underscored: true, timestamps: false },
    );
  }
}
