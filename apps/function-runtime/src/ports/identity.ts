/** An application user as functions see it in `context.user`. */
export interface FunctionUser {
  id: string;
  type?: 'normal' | 'server' | 'system';
  data?: Record<string, unknown>;
  custom_data?: Record<string, unknown>;
  identities?: Array<{ id: string; provider_type: string; [key: string]: unknown }>;
}

/** Who called a function: a client user, or the system (a trigger, the admin API, the server itself). */
export type FunctionCaller = { kind: 'system' } | { kind: 'user'; user: FunctionUser };

/** The user `context.user` shows while a function runs as system. */
export const SYSTEM_USER: FunctionUser = {
  id: '000000000000000000000000',
  type: 'system',
  data: { name: 'system' },
  custom_data: {},
  identities: [],
};

/** Looks up application users (for `run_as_user_id` and `run_as_user_id_script_source`). */
export interface UsersPort {
  findUser(appId: string, userId: string): Promise<FunctionUser | null>;
}
