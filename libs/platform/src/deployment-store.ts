import { type Document, isDuplicateKeyError } from '@tessera/datastore';
import { newObjectIdHex } from './ids';
import { decodeFiles, encodeFiles, type PlatformDatabase } from './platform-database';

/** An app directory as relative POSIX paths to bytes. */
export type DeployedFiles = Map<string, Uint8Array>;

export interface DeploymentRecord {
  _id: string;
  app_id: string;
  /** Increases by one with every deployment of the app. */
  version: number;
  deployed_at: number;
  origin: string;
  status: 'successful';
  user_id?: string;
  /** The name a push gave the deployment (App Services CLI `push --deployment-name`); unnamed ones show `<app name>-<version>`. */
  name?: string;
}

/** What every replica compares with the deployment it caches: the live deployment of an app. */
export interface LiveStamp {
  deploymentId: string;
  version: number;
}

const recordFields: Document = { files: 0 };

/**
 * The configuration each app runs with, in the platform database: every deployment is kept whole (the app
 * directory's files) in `deployments`, one document each, and `live_deployments` names the app's live one,
 * the highest version deployed. The deployment is written first and the live stamp after it, so a crash in
 * between leaves the previous version live. A unique index on (app, version) gives two replicas deploying
 * at once distinct versions.
 */
export class DeploymentStore {
  constructor(private readonly db: PlatformDatabase) {}

  async deploy(appId: string, files: DeployedFiles, meta: { origin: string; userId?: string; name?: string }): Promise<DeploymentRecord> {
    const deployments = await this.db.collection('deployments');
    const encoded = encodeFiles(files);
    for (let attempt = 1; ; attempt++) {
      const latest = await deployments.find({ app_id: appId }, { version: 1 }).sort({ version: -1 }).limit(1).toArray();
      const record: DeploymentRecord = {
        _id: newObjectIdHex(),
        app_id: appId,
        version: Number(latest[0]?.['version'] ?? 0) + 1,
        deployed_at: Math.floor(Date.now() / 1000),
        origin: meta.origin,
        status: 'successful',
        ...(meta.userId ? { user_id: meta.userId } : {}),
        ...(meta.name ? { name: meta.name } : {}),
      };
      try {
        await deployments.insertOne({ ...record, files: encoded });
      } catch (error) {
        // Another replica took this version: take the next one (a bounded number of times, so a bug cannot spin).
        if (isDuplicateKeyError(error) && attempt < 100) continue;
        throw error;
      }
      await this.publish(appId, record);
      return record;
    }
  }

  /** Moves the live stamp forward, never back (a slower replica's older version must not win). */
  private async publish(appId: string, record: DeploymentRecord): Promise<void> {
    const live = await this.db.collection('live_deployments');
    try {
      await live.updateOne({ _id: appId, version: { $lt: record.version } }, { $set: { version: record.version, deployment_id: record._id } }, { upsert: true });
    } catch (error) {
      // The upsert collided with the app's stamp, which names a newer version already.
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /** The live deployment with its files, or undefined when the app was never deployed. */
  async current(appId: string): Promise<{ record: DeploymentRecord; files: DeployedFiles } | undefined> {
    const stamp = (await this.liveStamps([appId])).get(appId);
    if (!stamp) return undefined;
    const stored = await (await this.db.collection('deployments')).findOne({ _id: stamp.deploymentId });
    if (!stored) return undefined;
    const { files, ...record } = stored;
    return { record: record as unknown as DeploymentRecord, files: decodeFiles(files) };
  }

  /** The files of one deployment of the app's history (see `list`), or undefined when it has no such deployment. */
  async files(appId: string, deploymentId: string): Promise<DeployedFiles | undefined> {
    if (!(await this.list(appId)).some((deployment) => deployment._id === deploymentId)) return undefined;
    const stored = await (await this.db.collection('deployments')).findOne({ _id: deploymentId, app_id: appId });
    return stored ? decodeFiles(stored['files']) : undefined;
  }

  /** The live deployment of each of these apps that has one: one small indexed read, cheap to poll. */
  async liveStamps(appIds: readonly string[]): Promise<Map<string, LiveStamp>> {
    const stamps = new Map<string, LiveStamp>();
    if (appIds.length === 0) return stamps;
    const found = await (await this.db.collection('live_deployments')).find({ _id: { $in: [...appIds] } }).toArray();
    for (const stamp of found) stamps.set(String(stamp['_id']), { deploymentId: String(stamp['deployment_id']), version: Number(stamp['version']) });
    return stamps;
  }

  /** Every deployment of the app, newest first, without files. */
  async list(appId: string): Promise<DeploymentRecord[]> {
    const stamp = (await this.liveStamps([appId])).get(appId);
    if (!stamp) return [];
    // A deployment above the live one is a deploy that did not finish: not part of the history.
    const found = await (await this.db.collection('deployments')).find({ app_id: appId, version: { $lte: stamp.version } }, recordFields).sort({ version: -1 }).toArray();
    return found as unknown as DeploymentRecord[];
  }
}
