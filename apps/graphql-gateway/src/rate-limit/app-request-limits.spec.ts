import { surfaceOf } from './app-request-limits';

describe('surfaceOf', () => {
  it('names the surface and the app of every client-facing path', () => {
    expect(surfaceOf('/api/client/v2.0/app/todo-abc/location')).toEqual({ surface: 'client-api', clientAppId: 'todo-abc' });
    expect(surfaceOf('/api/client/v2.0/app/todo-abc/functions/call')).toEqual({ surface: 'client-api', clientAppId: 'todo-abc' });
    expect(surfaceOf('/api/client/v2.0/app/todo-abc/graphql')).toEqual({ surface: 'graphql', clientAppId: 'todo-abc' });
    expect(surfaceOf('/api/client/v2.0/app/todo-abc/service/github/incoming_webhook/push?secret=x')).toEqual({ surface: 'webhook', clientAppId: 'todo-abc' });
    expect(surfaceOf('/app/todo-abc/endpoint/data/v1/action/find')).toEqual({ surface: 'data-api', clientAppId: 'todo-abc' });
    expect(surfaceOf('/app/todo-abc/endpoint/datasets?x=1')).toEqual({ surface: 'endpoint', clientAppId: 'todo-abc' });
    expect(surfaceOf('/app/todo-abc/endpoint')).toEqual({ surface: 'endpoint', clientAppId: 'todo-abc' });
    expect(surfaceOf('/hosting/todo-abc/index.html')).toEqual({ surface: 'hosting', clientAppId: 'todo-abc' });
    expect(surfaceOf('/api/client/v2.0/app/todo%2Dabc/location')).toEqual({ surface: 'client-api', clientAppId: 'todo-abc' });
  });

  it('names the app of auth requests by their token, and no app for the admin API or other paths', () => {
    expect(surfaceOf('/api/client/v2.0/auth/session')).toEqual({ surface: 'client-api', byToken: true });
    expect(surfaceOf('/api/admin/v3.0/groups/g/apps/a/data_api/config')).toBeUndefined();
    expect(surfaceOf('/console/')).toBeUndefined();
    expect(surfaceOf('/api/client/v2.0/app/%E0%A4%A/location')).toEqual({ surface: 'client-api', clientAppId: '%E0%A4%A' });
  });
});
