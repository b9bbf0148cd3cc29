import { startTestHost, type TestHost } from '../support/test-host';
import { AdminSession, canonicalJson } from './admin-session';

type ErrorBody = { error: string; error_code: string };
type Resolver = { _id: string; function_id?: string; function_name: string; on_type: string; field_name: string; [key: string]: unknown };

// The GraphQL configuration endpoints of the admin API, over HTTP against the real host: what they write is
// in the app's files (pull) and what the client GraphQL endpoint serves.
describe('admin API: GraphQL configuration, custom resolvers and validation settings', () => {
  let host: TestHost;
  let admin: AdminSession;
  let app: { _id: string; client_app_id: string };
  let functionIds: Record<string, string>;
  const at = (rest: string) => admin.app(app._id, rest);

  const graphql = async (query: string): Promise<{ data?: Record<string, unknown> | null; errors?: { message: string }[] }> => {
    const login = await host.anonymousLogin(app.client_app_id);
    const response = await fetch(`${host.url}/api/client/v2.0/app/${app.client_app_id}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${login.accessToken}` },
      body: JSON.stringify({ query }),
    });
    return (await response.json()) as { data?: Record<string, unknown> | null; errors?: { message: string }[] };
  };

  beforeAll(async () => {
    host = await startTestHost({ settings: { TESSERA_ADMIN_PASSWORD: 'graphql-config-password' } });
    admin = await AdminSession.login(host, 'admin', 'graphql-config-password');
    app = await admin.createApp('graphql-config');
    const pushed = await admin.push(
      app._id,
      new Map([
        ['root_config.json', canonicalJson({ name: 'graphql-config', deployment_model: 'GLOBAL', provider_region: 'aws-us-east-1' })],
        ['auth/providers.json', canonicalJson({ 'anon-user': { name: 'anon-user', type: 'anon-user', disabled: false } })],
        ['functions/config.json', canonicalJson([{ name: 'double' }, { name: 'greet' }])],
        ['functions/double.js', 'exports = (n) => n * 2;\n'],
        ['functions/greet.js', 'exports = (name) => `hello ${name}`;\n'],
      ]),
    );
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(204);
    const functions = await admin.request<{ _id: string; name: string }[]>('GET', at('/functions'));
    functionIds = Object.fromEntries(functions.body.map((fn) => [fn.name, fn._id]));
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  describe('graphql/config', () => {
    it("answers App Services' defaults, stores a change in graphql/config.json and the endpoint applies it", async () => {
      expect((await admin.request('GET', at('/graphql/config'))).body).toEqual({ use_natural_pluralization: true, disable_schema_introspection: false });
      expect((await graphql('{ __schema { queryType { name } } }')).data).toEqual({ __schema: { queryType: { name: 'Query' } } });

      expect((await admin.request('PUT', at('/graphql/config'), { disable_schema_introspection: true })).status).toBe(204);
      expect((await admin.request('GET', at('/graphql/config'))).body).toEqual({ use_natural_pluralization: true, disable_schema_introspection: true });
      expect(JSON.parse((await admin.pull(app._id)).get('graphql/config.json')!)).toEqual({ use_natural_pluralization: true, disable_schema_introspection: true });
      const blocked = await graphql('{ __schema { queryType { name } } }');
      expect(blocked.errors?.[0]?.message).toMatch(/introspection/i);

      expect((await admin.request('PUT', at('/graphql/config'), { use_natural_pluralization: true, disable_schema_introspection: false })).status).toBe(204);
      expect((await graphql('{ __schema { queryType { name } } }')).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
    });

    it('refuses turning natural pluralization off, wrong types, unknown members and a body that is no object', async () => {
      const off = await admin.request<ErrorBody>('PUT', at('/graphql/config'), { use_natural_pluralization: false });
      expect(off.status).toBe(400);
      expect(off.body.error).toContain('use_natural_pluralization');
      const wrongType = await admin.request<ErrorBody>('PUT', at('/graphql/config'), { disable_schema_introspection: 'yes' });
      expect(wrongType.status).toBe(400);
      expect(wrongType.body.error_code).toBe('InvalidParameter');
      expect((await admin.request<ErrorBody>('PUT', at('/graphql/config'), { nonsense: true })).body.error).toContain('"nonsense"');
      expect((await admin.request('PUT', at('/graphql/config'), [true])).status).toBe(400);
      expect((await admin.request('GET', at('/graphql/config'))).body).toEqual({ use_natural_pluralization: true, disable_schema_introspection: false });
    });
  });

  describe('graphql/custom_resolvers', () => {
    it('creates a resolver naming a function by id, reads it back, and the GraphQL endpoint serves it', async () => {
      const created = await admin.request<Resolver>('POST', at('/graphql/custom_resolvers'), {
        on_type: 'Query',
        field_name: 'double',
        function_id: functionIds['double'],
        input_type: 'Int',
        input_type_format: 'scalar',
        payload_type: 'Int',
        payload_type_format: 'scalar',
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body._id).toMatch(/^[0-9a-f]{24}$/);
      expect(created.body).toMatchObject({ on_type: 'Query', field_name: 'double', function_id: functionIds['double'], function_name: 'double', payload_type: 'Int' });

      expect((await admin.request('GET', at(`/graphql/custom_resolvers/${created.body._id}`))).body).toEqual(created.body);
      expect((await admin.request('GET', at('/graphql/custom_resolvers'))).body).toEqual([created.body]);
      const file = JSON.parse((await admin.pull(app._id)).get('graphql/custom_resolvers/query_double.json')!) as Record<string, unknown>;
      expect(file).toMatchObject({ on_type: 'Query', field_name: 'double', function_name: 'double', input_type: 'Int', input_type_format: 'scalar' });
      expect(await graphql('{ double(input: 21) }')).toEqual({ data: { double: 42 } });
    });

    it('modifies a resolver (it keeps its id when it moves to another field) and deletes it', async () => {
      const created = await admin.request<Resolver>('POST', at('/graphql/custom_resolvers'), { on_type: 'Query', field_name: 'hello', function_name: 'greet', input_type: 'String', input_type_format: 'scalar', payload_type: 'String', payload_type_format: 'scalar' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(await graphql('{ hello(input: "ada") }')).toEqual({ data: { hello: 'hello ada' } });

      const modified = await admin.request('PUT', at(`/graphql/custom_resolvers/${created.body._id}`), { _id: created.body._id, on_type: 'Query', field_name: 'greeting', function_id: functionIds['greet'], input_type: 'String', input_type_format: 'scalar', payload_type: 'String', payload_type_format: 'scalar' });
      expect(modified.status, JSON.stringify(modified.body)).toBe(204);
      expect((await admin.request<Resolver>('GET', at(`/graphql/custom_resolvers/${created.body._id}`))).body).toMatchObject({ _id: created.body._id, field_name: 'greeting' });
      const files = await admin.pull(app._id);
      expect(files.has('graphql/custom_resolvers/query_hello.json')).toBe(false);
      expect(files.has('graphql/custom_resolvers/query_greeting.json')).toBe(true);
      expect(await graphql('{ greeting(input: "bob") }')).toEqual({ data: { greeting: 'hello bob' } });

      expect((await admin.request('DELETE', at(`/graphql/custom_resolvers/${created.body._id}`))).status).toBe(204);
      const gone = await admin.request<ErrorBody>('GET', at(`/graphql/custom_resolvers/${created.body._id}`));
      expect(gone.status).toBe(404);
      expect(gone.body.error_code).toBe('CustomResolverNotFound');
      expect((await admin.pull(app._id)).has('graphql/custom_resolvers/query_greeting.json')).toBe(false);
      expect((await graphql('{ greeting(input: "bob") }')).errors?.[0]?.message).toContain('greeting');
    });

    it('refuses bad resolvers with App Services errors and deploys nothing', async () => {
      const post = (body: unknown) => admin.request<ErrorBody>('POST', at('/graphql/custom_resolvers'), body);
      const base = { on_type: 'Query', field_name: 'other', function_name: 'double' };
      const cases: Array<[unknown, number, string]> = [
        [{ ...base, function_name: 'missing' }, 404, 'FunctionNotFound'],
        [{ ...base, function_name: undefined, function_id: 'aaaaaaaaaaaaaaaaaaaaaaaa' }, 404, 'FunctionNotFound'],
        [{ on_type: 'Query', field_name: 'other' }, 400, 'InvalidParameter'],
        [{ ...base, field_name: 'not a name' }, 400, 'InvalidParameter'],
        [{ ...base, field_name: 7 }, 400, 'InvalidParameter'],
        [{ ...base, on_type: 'NoSuchType' }, 400, 'InvalidParameter'],
        [{ ...base, payload_type: 'Int' }, 400, 'InvalidParameter'],
        [{ ...base, payload_type: { bsonType: 'int' }, payload_type_format: 'scalar' }, 400, 'InvalidParameter'],
        [{ ...base, input_type: 'Int', input_type_format: 'sideways' }, 400, 'InvalidParameter'],
        [{ ...base, payload_type: 'NoSuchScalar', payload_type_format: 'scalar' }, 400, 'InvalidParameter'],
        [{ ...base, extra: 1 }, 400, 'InvalidParameter'],
        [{ ...base, field_name: 'double' }, 409, 'CustomResolverAlreadyExists'],
        ['text', 400, 'BadRequest'],
      ];
      for (const [body, status, code] of cases) {
        const response = await post(body);
        expect(response.status, JSON.stringify(body)).toBe(status);
        expect(response.body.error_code, JSON.stringify(body)).toBe(code);
      }
      const listed = await admin.request<Resolver[]>('GET', at('/graphql/custom_resolvers'));
      expect(listed.body.map((resolver) => resolver.field_name)).toEqual(['double']);

      const unknown = await admin.request<ErrorBody>('PUT', at('/graphql/custom_resolvers/aaaaaaaaaaaaaaaaaaaaaaaa'), base);
      expect(unknown.status).toBe(404);
      expect((await admin.request<ErrorBody>('DELETE', at('/graphql/custom_resolvers/aaaaaaaaaaaaaaaaaaaaaaaa'))).status).toBe(404);
    });
  });

  describe('validation_settings', () => {
    it('reads and sets the GraphQL validation settings, kept in graphql/validation_settings.json', async () => {
      const path = at('/validation_settings/graphql');
      expect((await admin.request('GET', path)).body).toEqual({ read_validation_action: 'ERROR', read_validation_level: 'STRICT', write_validation_action: 'ERROR', write_validation_level: 'STRICT' });
      expect((await admin.request('PUT', path, { read_validation_level: 'OFF', write_validation_action: 'WARN' })).status).toBe(204);
      const expected = { read_validation_action: 'ERROR', read_validation_level: 'OFF', write_validation_action: 'WARN', write_validation_level: 'STRICT' };
      expect((await admin.request('GET', path)).body).toEqual(expected);
      expect(JSON.parse((await admin.pull(app._id)).get('graphql/validation_settings.json')!)).toEqual(expected);

      for (const body of [{ read_validation_level: 'MODERATE' }, { write_validation_action: true }, { other: 'x' }, 'STRICT']) {
        const refused = await admin.request<ErrorBody>('PUT', path, body);
        expect(refused.status, JSON.stringify(body)).toBe(400);
      }
      expect((await admin.request('GET', path)).body).toEqual(expected);
    });

    it('reads and sets null type schema validation', async () => {
      const path = at('/validation_settings/null_type_schema_validation');
      expect((await admin.request('GET', path)).body).toEqual({ enabled: false });
      expect((await admin.request('PUT', path, { enabled: true })).status).toBe(204);
      expect((await admin.request('GET', path)).body).toEqual({ enabled: true });
      expect(JSON.parse((await admin.pull(app._id)).get('validation_settings/null_type_schema_validation.json')!)).toEqual({ enabled: true });
      for (const body of [{}, { enabled: 'true' }, { enabled: true, more: 1 }]) {
        const refused = await admin.request<ErrorBody>('PUT', path, body);
        expect(refused.status, JSON.stringify(body)).toBe(400);
        expect(refused.body.error_code).toBe('InvalidParameter');
      }
      expect((await admin.request('GET', path)).body).toEqual({ enabled: true });
    });
  });

  it("refuses another group's id, an unknown app and no token on every route", async () => {
    const routes: Array<[string, string]> = [
      ['GET', '/graphql/config'],
      ['PUT', '/graphql/config'],
      ['GET', '/graphql/custom_resolvers'],
      ['POST', '/graphql/custom_resolvers'],
      ['GET', '/graphql/custom_resolvers/x'],
      ['PUT', '/graphql/custom_resolvers/x'],
      ['DELETE', '/graphql/custom_resolvers/x'],
      ['GET', '/validation_settings/graphql'],
      ['PUT', '/validation_settings/graphql'],
      ['GET', '/validation_settings/null_type_schema_validation'],
      ['PUT', '/validation_settings/null_type_schema_validation'],
    ];
    for (const [method, rest] of routes) {
      const body = method === 'GET' || method === 'DELETE' ? undefined : { enabled: true };
      const otherGroup = await admin.request<ErrorBody>(method, `/groups/aaaaaaaaaaaaaaaaaaaaaaaa/apps/${app._id}${rest}`, body);
      expect(otherGroup.status, `${method} ${rest}`).toBe(404);
      expect(otherGroup.body.error_code).toBe('GroupNotFound');
      const unknownApp = await admin.request<ErrorBody>(method, admin.app('aaaaaaaaaaaaaaaaaaaaaaaa', rest), body);
      expect(unknownApp.status, `${method} ${rest}`).toBe(404);
      const anonymous = await admin.request(method, at(rest), body, { token: 'not-a-token' });
      expect(anonymous.status, `${method} ${rest}`).toBe(401);
    }
  });
});
