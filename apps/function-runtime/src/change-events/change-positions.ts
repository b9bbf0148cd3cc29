import { type DataSourceClient, isDuplicateKeyError, type ResumeToken } from '@tessera/datastore';

/**
 * Where each change feed's publisher got to: the resume token of the last change the stream stored, per app
 * and linked service, in the platform's own database (never a linked cluster, whose feed it would feed).
 */
export class ChangePositions {
  constructor(private readonly platform: DataSourceClient) {}

  private get collection() {
    return this.platform.db('platform').collection('change_positions');
  }

  async get(key: string): Promise<ResumeToken | undefined> {
    const found = await this.collection.findOne({ _id: key });
    const token = found?.['token'] as { _data?: unknown } | undefined;
    return typeof token?._data === 'string' ? { _data: token._data } : undefined;
  }

  /**
   * Moves the position forward only (tokens of one feed sort by commit order): two publisher replicas of one
   * feed both save, and the one behind must not pull the position back.
   */
  async save(key: string, token: ResumeToken): Promise<void> {
    try {
      await this.collection.updateOne({ _id: key, 'token._data': { $lt: token._data } }, { $set: { token: { _data: token._data }, savedAt: new Date() } }, { upsert: true });
    } catch (error) {
      // The upsert met the position saved by a replica that is ahead: nothing to do.
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  async forget(key: string): Promise<void> {
    await this.collection.deleteOne({ _id: key });
  }
}
