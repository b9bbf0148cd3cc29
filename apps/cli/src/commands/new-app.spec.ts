import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadApp } from '@tessera/app-config';
import { makeTempDir } from '@tessera/testing';
import { usageError } from '../testing/usage-error';
import { appViolations, checkAppName, enclosingAppConfig, initialAppFiles, parseDeploymentModel, parseEnvironment, parseLocation, withAppId } from './new-app';

const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes);

describe("realm-cli's app init directory", () => {
  it('writes the 20210101 layout with no app_id, the API key provider disabled and every environment', () => {
    const files = initialAppFiles({ name: 'notes', location: 'IE', deployment_model: 'LOCAL', environment: 'qa' });
    expect([...files.keys()].sort()).toEqual([
      'auth/custom_user_data.json',
      'auth/providers.json',
      'environments/development.json',
      'environments/no-environment.json',
      'environments/production.json',
      'environments/qa.json',
      'environments/testing.json',
      'functions/config.json',
      'graphql/config.json',
      'http_endpoints/config.json',
      'realm_config.json',
      'sync/config.json',
    ]);
    expect(text(files.get('realm_config.json'))).toBe('{\n    "config_version": 20210101,\n    "name": "notes",\n    "location": "IE",\n    "deployment_model": "LOCAL",\n    "environment": "qa"\n}\n');
    expect(JSON.parse(text(files.get('auth/providers.json')))).toEqual({ 'api-key': { name: 'api-key', type: 'api-key', disabled: true } });
    expect(JSON.parse(text(files.get('sync/config.json')))).toEqual({ development_mode_enabled: false });
    expect(JSON.parse(text(files.get('environments/no-environment.json')))).toEqual({ values: {} });
  });

  it('is an app the validator accepts, in the realm-cli export layout, and names no environment unless asked', () => {
    const files = initialAppFiles({ name: 'notes', location: 'US-VA', deployment_model: 'GLOBAL' });
    expect(appViolations(files)).toEqual([]);
    const loaded = loadApp(files);
    expect(loaded.layout).toBe('export-20210101');
    expect(loaded.app.settings).toMatchObject({ name: 'notes', location: 'US-VA', deployment_model: 'GLOBAL' });
    expect(loaded.app.settings.app_id).toBeUndefined();
    expect(JSON.parse(text(files.get('realm_config.json')))).not.toHaveProperty('environment');
  });

  it('refuses app names the server refuses, and takes realm-cli spellings of the other settings', () => {
    expect(checkAppName('my_app-2')).toBe('my_app-2');
    expect(usageError(() => checkAppName('my app')).message).toContain('use only ASCII letters, digits, underscores and hyphens');
    expect(usageError(() => checkAppName('x'.repeat(33))).message).toContain('33 characters, the limit is 32');
    expect(usageError(() => checkAppName('')).exitCode).toBe(2);
    expect(parseLocation('us-or')).toBe('US-OR');
    expect(parseDeploymentModel('local')).toBe('LOCAL');
    expect(parseEnvironment('Production')).toBe('production');
    expect(usageError(() => parseLocation('moon')).message).toBe('unsupported --location "MOON": use one of US-VA, US-OR, DE-FF, IE, AU, IN-MB, SG');
    expect(usageError(() => parseEnvironment('staging')).exitCode).toBe(2);
  });

  it('writes the new app id after config_version, keeping the file indentation and every other key', () => {
    expect(withAppId('{\n    "config_version": 20210101,\n    "name": "notes"\n}\n', 'notes-abcde')).toBe('{\n    "config_version": 20210101,\n    "app_id": "notes-abcde",\n    "name": "notes"\n}\n');
    expect(withAppId('{\n  "name": "notes",\n  "app_id": ""\n}', 'notes-abcde')).toBe('{\n  "app_id": "notes-abcde",\n  "name": "notes"\n}\n');
  });

  it('finds the app a directory is in, but not a config.json that belongs to no app', async () => {
    const dir = makeTempDir();
    try {
      mkdirSync(join(dir.path, 'app', 'functions', 'deep'), { recursive: true });
      writeFileSync(join(dir.path, 'app', 'realm_config.json'), '{"name": "a"}');
      writeFileSync(join(dir.path, 'app', 'functions', 'config.json'), '[]');
      expect(await enclosingAppConfig(join(dir.path, 'app', 'functions', 'deep'))).toBe(join(dir.path, 'app', 'realm_config.json'));
      mkdirSync(join(dir.path, 'other', 'sub'), { recursive: true });
      writeFileSync(join(dir.path, 'other', 'config.json'), '{"port": 3000}');
      expect(await enclosingAppConfig(join(dir.path, 'other', 'sub'))).toBeUndefined();
    } finally {
      dir.remove();
    }
  });
});
