import { Controller } from '@nestjs/common';
import { type CommandRequest, type CommandResponseInput, Subjects } from '@tessera/contracts';
import { CommandHandler } from '@tessera/messaging';
import { DeployedApps } from '@tessera/platform';
import { GraphqlApps } from './graphql-apps.service';
import { runDirect } from './graphql-direct';
import { GraphqlExecutor } from './graphql-executor';

/**
 * What other services ask of the GraphQL API over the bus: the admin API's `POST .../graphql`, an operation run
 * as the system user (no rules) against the schema this gateway built for the app's deployment, answered with
 * the GraphQL response the endpoint would write.
 */
@Controller()
export class GraphqlCommandsHandler {
  constructor(
    private readonly deployed: DeployedApps,
    private readonly apps: GraphqlApps,
    private readonly executor: GraphqlExecutor,
  ) {}

  @CommandHandler(Subjects.GraphqlOperationRun)
  async run(request: CommandRequest<typeof Subjects.GraphqlOperationRun>): Promise<CommandResponseInput<typeof Subjects.GraphqlOperationRun>> {
    const deployed = await this.deployed.byId(request.appId);
    const app = { id: deployed.record._id, deploymentId: deployed.deployment?._id, config: deployed.config };
    const entry = this.apps.entryFor(app, deployed.record.client_app_id);
    const graphql = this.executor.contextFor(app, entry.model, 'system', { origin: 'admin' });
    const params = { query: request.query, ...(request.variables ? { variables: request.variables } : {}), ...(request.operationName ? { operationName: request.operationName } : {}) };
    const answer = await runDirect(entry.yoga, { params, mediaType: 'application/json' }, { graphql });
    if (!answer) return { body: JSON.stringify({ data: null, errors: [{ message: 'the GraphQL request is not valid: it needs a query, and variables as an object', locations: [] }] }) };
    return { body: 'body' in answer ? answer.body : await answer.response.text() };
  }
}
