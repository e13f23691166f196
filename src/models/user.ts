import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export class UserModel extends Model<InferAttributes<UserModel>, InferCreationAttributes<UserModel>> {
  declare id: string;
  declare email: string;
  declare name: string;
  declare passwordHash: string;
  declare role: CreationOptional<'user' | 'admin'>;
  /** The tiers this account may use (set by the operator or an admin, never by the account itself). */
  declare plan: CreationOptional<'free' | 'pro' | 'enterprise'>;
  declare disabledAt: Date | null;
  declare lastActiveAt: Date;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static setup(sequelize: Sequelize): void {
    UserModel.init(
      {
        id: { type: DataTypes.STRING(40), primaryKey: true },
        email: { type: DataTypes.STRING(254), allowNull: false, unique: true },
        name: { type: DataTypes.STRING(100), allowNull: false },
        passwordHash: { type: DataTypes.STRING(255), allowNull: false },
        role: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'user' },
        plan: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'free' },
        disabledAt: { type: DataTypes.DATE, allowNull: true },
        lastActiveAt: { type: DataTypes.DATE, allowNull: false },
        createdAt: DataTypes.DATE,
        updatedAt: DataTypes.DATE,
      },
      { sequelize, tableName: 'users', underscored: true },
    );
  }
}
