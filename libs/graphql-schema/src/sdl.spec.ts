import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readAppDirectory } from '@tessera/app-config';
import { shopApp } from '@tessera/testing';
import { buildSchema } from 'graphql/index.js';
import { printGraphqlSdl } from './sdl';

// Checked-in SDL: a generator change that alters the schema fails here until the snapshot is
// regenerated on purpose (UPDATE_GRAPHQL_SNAPSHOTS=1 npx vitest run libs/graphql-schema) and reviewed.
const snapshots = resolve(__dirname, '__snapshots__');

function expectSnapshot(name: string, sdl: string): void {
  const file = resolve(snapshots, name);
  if (process.env['UPDATE_GRAPHQL_SNAPSHOTS'] === '1') writeFileSync(file, sdl);
  expect(sdl).toBe(readFileSync(file, 'utf8'));
}

describe('generated SDL snapshots', () => {
  it('matches the checked-in schema of examples/todo', async () => {
    const { app } = await readAppDirectory(resolve(__dirname, '../../../examples/todo'));
    const sdl = printGraphqlSdl(app);
    expectSnapshot('todo.graphql', sdl);
    expect(() => buildSchema(sdl)).not.toThrow();
  });

  it('matches the checked-in schema of the shop app (every BSON type, embedded objects, arrays, relationships)', () => {
    const sdl = printGraphqlSdl(shopApp());
    expectSnapshot('shop.graphql', sdl);
    expect(() => buildSchema(sdl)).not.toThrow();
  });

  it('prints the same SDL however the collections are ordered', () => {
    const app = shopApp();
    const reversed = shopApp();
    reversed.services[0].collectionRules.reverse();
    expect(printGraphqlSdl(reversed)).toBe(printGraphqlSdl(app));
  });
});
