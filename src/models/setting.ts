import { DataTypes, Model, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export class SettingModel extends Model<InferAttributes<SettingModel>, InferCreationAttributes<SettingModel>> {
  declare key: string;
  declare value: string;

  static setup(sequelize: Sequelize): void {
    SettingModel.init(
      { key: { type: DataTypes.STRING(64), primaryKey: true }, value: { type: DataTypes.TEXT, allowNull: false } },
      { sequelize, tableName: 'settings', timestamps: false },
    );
  }
}
