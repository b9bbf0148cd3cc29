// The lookup lives in @tessera/platform, shared with the sync service's permissions.
export { readCustomUserData } from '@tessera/platform';
