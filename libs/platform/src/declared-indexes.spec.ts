import { type AppConfig, emptyApp } from '@tessera/app-config';
import { describe, expect, it } from 'vitest';
import { declaredIndexes } from './declared-indexes';

// Which indexes flexible sync declares for its queryable fields, from the configuration alone.
function app(sync: Record<string, unknown> | undefined, options: { embedded?: boolean; ruleIndexes?: { key: Record<string, 1 | -1>; name?: string }[] } = {}): AppConfig {
  const config = emptyApp('indexed');
  const string = { bsonType: 'string' };
  config.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'C0', ...(options.embedded && sync ? { flexible_sync: sync } : {}) } },
    collectionRules: [
      { database: 'db', collection: 'Task', schema: { title: 'Task', bsonType: 'object', properties: { _id: string, owner_id: string, status: string } }, ...(options.ruleIndexes ? { indexes: options.ruleIndexes } : {}) },
      { database: 'db', collection: 'Note', schema: { title: 'Note', bsonType: 'object', properties: { _id: string, owner_id: string, text: string } } },
      // No schema: not a synced collection.
      { database: 'db', collection: 'Loose' },
    ],
    rules: [],
    webhooks: [],
  });
  if (sync && !options.embedded) config.sync = sync;
  return config;
}

const summary = (config: AppConfig) => declaredIndexes(config).map((entry) => `${entry.cluster}/${entry.database}.${entry.collection}: ${entry.indexes.map((index) => index.name).join(',')}${entry.origin === 'sync' ? ' (sync)' : ''}`);

describe('indexes flexible sync declares', () => {
  const flexible = { type: 'flexible', state: 'enabled', service_name: 'mongodb-atlas', queryable_fields_names: ['_id', 'owner_id', 'status'], collection_queryable_fields_names: { Note: ['text'] } };

  it('one per queryable field a synced schema has, never _id', () => {
    expect(summary(app(flexible))).toEqual(['C0/db.Task: owner_id_1,status_1 (sync)', 'C0/db.Note: owner_id_1,text_1 (sync)']);
  });

  it('from the flexible_sync a cluster service embeds, as older configurations held it', () => {
    expect(summary(app(flexible, { embedded: true }))).toEqual(['C0/db.Task: owner_id_1,status_1 (sync)', 'C0/db.Note: owner_id_1,text_1 (sync)']);
  });

  it('none while sync is disabled, or partition-based', () => {
    expect(summary(app({ ...flexible, state: 'disabled' }))).toEqual([]);
    expect(summary(app({ type: 'partition', state: 'enabled', partition: { key: 'owner_id', type: 'string' } }))).toEqual([]);
    expect(summary(app(undefined))).toEqual([]);
  });

  it('leaves a field to the index a rule file declares on the same key or under the same name', () => {
    const declared = app(flexible, { ruleIndexes: [{ key: { owner_id: 1 }, name: 'by_owner' }, { key: { status: 1, owner_id: 1 }, name: 'status_1' }] });
    expect(summary(declared)).toEqual(['C0/db.Task: by_owner,status_1', 'C0/db.Note: owner_id_1,text_1 (sync)']);
  });

  it('ignores a field list that is not a list of names', () => {
    expect(summary(app({ ...flexible, queryable_fields_names: 'owner_id', collection_queryable_fields_names: { Note: [3, 'text'] } }))).toEqual(['C0/db.Note: text_1 (sync)']);
  });
});
