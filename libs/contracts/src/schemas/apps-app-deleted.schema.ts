import { z } from 'zod';

/** An application was deleted: services drop what they keep for it (sync: histories, client files, live connections). */
export const AppDeletedSchema = z.object({
  appId: z.string().min(1),
});
export type AppDeleted = z.infer<typeof AppDeletedSchema>;
