import { Subjects } from '@tessera/contracts';
import { MessageBus } from '@tessera/messaging';
import { loadSettings } from '@tessera/settings';
import { makeTempDir, repositoryRoot } from '@tessera/testing';
import { join } from 'node:path';
import { startHost, type RunningHost } from './host';

// The standalone host in one process: the gateway's path to the runtime goes over the in-process transport,
// and the runtime reaches the datastore through the rules layer.
describe('standalone host', () => {
  const dir = makeTempDir('tessera-host-');
  let host: RunningHost;
  let bus: MessageBus;
  let appId: string;

  beforeAll(async () => {
    host = await startHost(loadSettings({ PORT: '0', TESSERA_DATA_DIR: dir.path, TESSERA_EXAMPLE_APP: join(repositoryRoot, 'examples/todo'), LOG_LEVEL: 'warn', TESSERA_ADMIN_PASSWORD: 'host-test-password' }));
    bus = host.nest.get(MessageBus);
    appId = host.bootstrap.createdExample!._id;
  });

  afterAll(async () => {
    await host?.close();
    dir.remove();
  });

  const run = (functionName: string, args: unknown[], caller: { type: 'system' } | { type: 'user'; user: { id: string } }) =>
    bus.request(Subjects.FunctionsExecutionRun, { appId, functionName, args: args as never, caller, metadata: { origin: 'client' } });

  it('runs an example function through the transport and the runtime', async () => {
    expect(await run('sum', [{ $numberInt: '2' }, { $numberInt: '3' }], { type: 'user', user: { id: 'u1' } })).toMatchObject({ ok: true, result: { $numberInt: '5' } });
    expect(await run('greet', ['Ada'], { type: 'system' })).toMatchObject({ ok: true, result: expect.stringContaining('Ada') });
  });

  it('writes and reads through the data-access API under the example rules', async () => {
    const added = await run('addItem', ['buy milk'], { type: 'user', user: { id: 'u1' } });
    expect(added).toMatchObject({ ok: true, result: { $oid: expect.stringMatching(/^[0-9a-f]{24}$/) } });
    const mine = await run('listMyItems', [], { type: 'user', user: { id: 'u1' } });
    expect(mine).toMatchObject({ ok: true, result: [{ summary: 'buy milk', owner_id: 'u1' }] });
    const theirs = await run('listMyItems', [], { type: 'user', user: { id: 'u2' } });
    expect(theirs).toMatchObject({ ok: true, result: [] });
  });

  it('reports a missing function as FunctionNotFound', async () => {
    expect(await run('nope', [], { type: 'system' })).toMatchObject({ ok: false, error: { errorCode: 'FunctionNotFound' } });
  });
});
