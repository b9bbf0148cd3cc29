import type { CallerUser } from '@tessera/contracts';

/** Looks up application users (for `run_as_user_id` and `run_as_user_id_script_source`), as caller identities. */
export interface UsersPort {
  findUser(appId: string, userId: string): Promise<CallerUser | null>;
}
