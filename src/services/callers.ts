import type { ApiKeyRecord } from '../repositories/api-key-repository.js';
import type { UserRecord } from '../repositories/user-repository.js';

/** A request authenticated with a JWT. */
export interface UserCaller {
  kind: 'user';
  user: UserRecord;
  role: 'user' | 'admin';
  sessionId: string;
}

/** A request authenticated with an API key. */
export interface KeyCaller {
  kind: 'key';
  key: ApiKeyRecord;
  user: UserRecord;
}

export type Caller = UserCaller | KeyCaller;
