import { projectName as admin } from '@tessera/admin-api';
export const projectName = `server:${admin}`;
