import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A login. Its tokens carry its id; ending it (logout, password change) ends them all at once. */
export class SessionModel extends Model<InferAttributes<SessionModel>, InferCreationAttributes<SessionModel>> {
  declare id: string;
  declare userId: string;
  /** Id of the one refresh token currently valid for this session (refresh tokens are single-use). */
  declare refreshJti: string;
  /** Absolute end of the session: no refresh goes past it. */
  declare expiresAt: Date;
  declare endedAt: Date | null;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static setup(sequelize: Sequelize): void {
    SessionModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        userId: { type: DataTypes.STRING(40), allowNull: false },
        refreshJti: { type: DataTypes.STRING(64), allowNull: false },
        expiresAt: { type: DataTypes.DATE, allowNull: false },
        endedAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'sessions', underscored: true },
    );
  }
}
