import { emptyApp } from '@tessera/app-config';
import { type AppAuthEvent } from '@tessera/contracts';
import { authenticationTriggers, authTriggerEvent, firesOn, userCreationFunction } from './authentication-trigger';
import { databaseTriggers } from './database-trigger';

const event = (operationType: AppAuthEvent['operationType'], providers: string[]): AppAuthEvent => ({
  appId: 'app',
  eventId: 'e1',
  operationType,
  providers,
  user: { id: 'u1', type: 'normal', data: { email: 'a@example.com', n: { $numberInt: '3' } }, identities: [{ id: 'i1', provider_type: providers[0] ?? 'anon-user' }] },
  time: '2026-11-26T08:00:00.000Z',
});

describe('authentication triggers', () => {
  const app = emptyApp('auth');
  app.triggers.push(
    { name: 'create', type: 'AUTHENTICATION', function_name: 'f', config: { operation_type: 'CREATE', providers: ['anon-user'] } },
    { name: 'anyLogin', type: 'AUTHENTICATION', event_processors: { FUNCTION: { config: { function_name: 'g' } } }, config: { operation_type: 'login', providers: [] } },
    { name: 'off', type: 'AUTHENTICATION', function_name: 'f', config: { operation_type: 'DELETE' }, disabled: true },
    { name: 'unknownOperation', type: 'AUTHENTICATION', function_name: 'f', config: { operation_type: 'UPDATE' } },
    { name: 'db', type: 'DATABASE', function_name: 'f', config: { service_name: 's' } },
  );

  it('reads the enabled ones with a known operation, from function_name or the event processor', () => {
    expect(authenticationTriggers(app).map((trigger) => [trigger.name, trigger.functionName, trigger.operationType])).toEqual([
      ['create', 'f', 'CREATE'],
      ['anyLogin', 'g', 'LOGIN'],
    ]);
  });

  it('fires on its operation and one of its providers; no providers means every provider', () => {
    const [create, anyLogin] = authenticationTriggers(app);
    expect(firesOn(create, event('CREATE', ['anon-user']))).toBe(true);
    expect(firesOn(create, event('CREATE', ['local-userpass']))).toBe(false);
    expect(firesOn(create, event('LOGIN', ['anon-user']))).toBe(false);
    expect(firesOn(anyLogin, event('LOGIN', ['api-key']))).toBe(true);
  });

  it("gives the function App Services' auth event: BSON-typed user data and a Date", () => {
    const argument = authTriggerEvent(event('CREATE', ['anon-user']));
    expect(argument).toMatchObject({ operationType: 'CREATE', providers: ['anon-user'], user: { id: 'u1', type: 'normal', identities: [{ id: 'i1', provider_type: 'anon-user' }] } });
    expect(argument['time']).toEqual(new Date('2026-11-26T08:00:00.000Z'));
    expect((argument['user'] as { data: { n: { constructor: { name: string } } } }).data.n.constructor.name).toBe('Int32');
  });

  it('runs the user creation function only when custom user data is enabled and names one', () => {
    const custom = emptyApp('custom');
    expect(userCreationFunction(custom)).toBeUndefined();
    custom.settings.custom_user_data_config = { enabled: false, on_user_creation_function_name: 'make' };
    expect(userCreationFunction(custom)).toBeUndefined();
    custom.settings.custom_user_data_config = { enabled: true, on_user_creation_function_name: 'make' };
    expect(userCreationFunction(custom)).toBe('make');
  });
});

describe('database trigger lifecycle settings', () => {
  it("reads unordered, skip_catchup_events, tolerate_resume_errors and disabled with App Services' defaults", () => {
    const app = emptyApp('db');
    app.triggers.push(
      { name: 'defaults', type: 'DATABASE', function_name: 'f', config: { service_name: 's' } },
      { name: 'set', type: 'DATABASE', function_name: 'f', config: { service_name: 's', unordered: true, skip_catchup_events: true, tolerate_resume_errors: true }, disabled: true },
    );
    const [defaults, set] = databaseTriggers(app);
    expect(defaults).toMatchObject({ ordered: true, skipCatchup: false, tolerateResumeErrors: false, disabled: false });
    expect(set).toMatchObject({ ordered: false, skipCatchup: true, tolerateResumeErrors: true, disabled: true });
  });
});
