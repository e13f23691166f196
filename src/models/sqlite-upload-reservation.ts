import { DataTypes, Model, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** Room an upload under way holds in its user's SQLite folder, until it is kept or fails (or expires). */
export class SqliteUploadReservationModel extends Model<InferAttributes<SqliteUploadReservationModel>, InferCreationAttributes<SqliteUploadReservationModel>> {
  declare id: string;
  declare userId: string;
  declare bytes: number;
  declare expiresAt: Date;

  static setup(sequelize: Sequelize): void {
    SqliteUploadReservationModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        userId: { type: DataTypes.STRING(40), allowNull: false },
        // BIGINT comes back as a string from PostgreSQL: read as a number (folders stay far below 2^53 bytes).
        bytes: { type: DataTypes.BIGINT, allowNull: false, get() { return Number(this.getDataValue('bytes')); } },
        expiresAt: { type: DataTypes.DATE, allowNull: false },
      },
      { sequelize, tableName: 'upload_reservations', underscored: true, timestamps: false },
    );
  }
}
