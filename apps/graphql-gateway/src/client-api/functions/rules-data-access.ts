import { type CallerUser, ruleUserOf } from '@tessera/contracts';
import { DataAccess } from '@tessera/data-access';
import type { DataSources } from '@tessera/platform';
import { type DataAccessApp, RemoteDataAccess } from './remote-data-access.port';

/**
 * The production RemoteDataAccess: every action goes through libs/data-access as the calling user, so the
 * app's rules decide, `watch` included (its filter is checked when the stream opens and every change
 * event passes the read rules: see libs/data-access/src/watch-events.ts).
 */
export class RulesRemoteDataAccess extends RemoteDataAccess {
  private readonly dataAccess: DataAccess;

  constructor(dataSources: DataSources, dataAccess?: DataAccess) {
    super();
    this.dataAccess = dataAccess ?? new DataAccess(dataSources);
  }

  execute(app: DataAccessApp, serviceName: string, action: string, args: Record<string, unknown>, user: CallerUser): Promise<unknown> {
    const request = { app: { id: app.appId, deploymentId: app.deploymentId, config: app.config }, service: serviceName, args, caller: { kind: 'user' as const, user: ruleUserOf(user) } };
    // watch checks its arguments before it opens: a bad filter rejects here, before the event stream starts.
    if (action === 'watch') return new Promise((resolve) => resolve(this.dataAccess.watch(request)));
    return this.dataAccess.execute({ ...request, action });
  }
}
