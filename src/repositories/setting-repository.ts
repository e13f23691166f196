import { SettingModel } from '../models/index.js';

export const settingRepository = {
  async get(key: string): Promise<string | null> {
    return (await SettingModel.findByPk(key))?.value ?? null;
  },
  async set(key: string, value: string): Promise<void> {
    await SettingModel.upsert({ key, value });
  },
};
