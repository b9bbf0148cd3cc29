import { decodeFiles, type DeployedFiles, type PlatformDatabase } from '@tessera/platform';

/**
 * The files of one stored deployment of an app. DeploymentStore reads only the live deployment's files;
 * this is its read of any one, kept here until DeploymentStore offers it (then this file goes).
 */
export async function deploymentFiles(db: PlatformDatabase, appId: string, deploymentId: string): Promise<DeployedFiles | undefined> {
  const stored = await (await db.collection('deployments')).findOne({ _id: deploymentId, app_id: appId });
  return stored ? decodeFiles(stored['files']) : undefined;
}
