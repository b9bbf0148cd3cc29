import { join } from 'node:path';
import { loadApp, readAppFiles, validateApp, writeAppFiles, type AppFiles, type ConfigViolation } from './index';
import { editJson, readDirSync, type Doc } from './__fixtures__/app-files';
import { fieldsReadBy } from './validate-flexible-sync';

// A flexible-sync app exactly as App Services exported it (see its README).
const FIXTURE = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'appservices-flexible');
const SYNC = 'sync/config.json';
const TASK = 'data_sources/mongodb-atlas/taskboard/Task/rules.json';
const TASK_SCHEMA = 'data_sources/mongodb-atlas/taskboard/Task/schema.json';
const LOG_SCHEMA = 'data_sources/mongodb-atlas/taskboard/Log/schema.json';
const exported = (): AppFiles => readDirSync(FIXTURE);
const rules = (files: AppFiles): string[] => loadApp(files).violations.map((v) => `${v.file}|${v.path}|${v.rule}`);

describe('flexible sync configuration', () => {
  it('reads the App Services export with zero violations, and keeps every sync member through the current layout', () => {
    const { layout, violations, warnings } = loadApp(exported());
    expect(layout).toBe('appservices');
    expect(violations).toEqual([]);
    expect(warnings).toEqual([]);
    const { app } = readAppFiles(exported());
    expect(app.sync).toMatchObject({
      type: 'flexible',
      state: 'enabled',
      queryable_fields_names: ['owner_id', 'team_id'],
      indexed_queryable_fields_names: ['team_id'],
      collection_queryable_fields_names: { Task: ['status', 'due'] },
      asymmetric_tables: ['Log'],
    });
    const again = readAppFiles(writeAppFiles(app));
    expect(again.app.sync).toEqual(app.sync);
    expect(validateApp(again.app)).toEqual([]);
  });

  const cases: Array<[string, (files: AppFiles) => void, string]> = [
    ['a queryable field list that is not an array', (f) => editJson(f, SYNC, (d) => (d.queryable_fields_names = 'owner_id')), `${SYNC}|queryable_fields_names|field.type`],
    ['a queryable field listed twice', (f) => editJson(f, SYNC, (d) => d.queryable_fields_names.push('owner_id')), `${SYNC}|queryable_fields_names[2]|sync.queryable_fields_names.duplicate`],
    ['an operator as a queryable field', (f) => editJson(f, SYNC, (d) => d.queryable_fields_names.push('$where')), `${SYNC}|queryable_fields_names[2]|sync.queryable_fields_names.value`],
    ['two indexed queryable fields', (f) => editJson(f, SYNC, (d) => (d.indexed_queryable_fields_names = ['team_id', 'owner_id'])), `${SYNC}|indexed_queryable_fields_names|sync.indexed_queryable_fields_names.count`],
    ['an indexed field that is not queryable', (f) => editJson(f, SYNC, (d) => (d.indexed_queryable_fields_names = ['summary'])), `${SYNC}|indexed_queryable_fields_names[0]|sync.indexed_queryable_fields_names.not_queryable`],
    ['an indexed field missing from a synced schema', (f) => editJson(f, LOG_SCHEMA, (d: Doc) => delete d.properties.team_id), `${LOG_SCHEMA}|properties|sync.indexed_queryable_fields_names.schema`],
    ['an indexed field of another type in one schema', (f) => editJson(f, LOG_SCHEMA, (d: Doc) => (d.properties.team_id.bsonType = 'string')), `${LOG_SCHEMA}|properties.team_id|sync.indexed_queryable_fields_names.type`],
    ['a queryable field holding embedded objects', (f) => editJson(f, SYNC, (d) => (d.collection_queryable_fields_names.Task = ['checklist'])), `${TASK_SCHEMA}|properties.checklist.bsonType|sync.queryable_fields_names.type`],
    ['per-collection queryable fields that are not a list', (f) => editJson(f, SYNC, (d) => (d.collection_queryable_fields_names.Task = 'status')), `${SYNC}|collection_queryable_fields_names.Task|sync.collection_queryable_fields_names.value`],
    ['an asymmetric table listed twice', (f) => editJson(f, SYNC, (d) => d.asymmetric_tables.push('Log')), `${SYNC}|asymmetric_tables[1]|sync.asymmetric_tables.duplicate`],
    ['a partition key in a flexible configuration', (f) => editJson(f, SYNC, (d) => (d.partition = { key: 'owner_id', type: 'string' })), `${SYNC}|partition|sync.flexible.partition`],
    ['flexible sync without service_name', (f) => editJson(f, SYNC, (d) => delete d.service_name), `${SYNC}|service_name|sync.service_name.required`],
  ];

  it.each(cases)('refuses %s, naming the file, path and rule', (_name, change, expected) => {
    const files = exported();
    change(files);
    expect(rules(files), rules(files).join('\n')).toContain(expected);
  });

  // App Services accepts a role that is not sync compatible (its edge-server template has one): the sync
  // sessions it applies to are denied. The push goes through with a warning naming the role and why.
  const roleCases: Array<[string, (files: AppFiles) => void, string]> = [
    ['a document filter on a field that is not queryable', (f) => editJson(f, TASK, (d) => (d.roles[1].document_filters.read = { summary: 'mine' })), `${TASK}|roles[1].document_filters.read|sync.role.document_filters.queryable`],
    ['a non-queryable field inside $or', (f) => editJson(f, TASK, (d) => (d.roles[1].document_filters.write = { $or: [{ owner_id: '%%user.id' }, { tags: 'shared' }] })), `${TASK}|roles[1].document_filters.write|sync.role.document_filters.queryable`],
    ['a role without document filters', (f) => editJson(f, TASK, (d) => delete d.roles[1].document_filters), `${TASK}|roles[1].document_filters|sync.role.document_filters.required`],
    ['a role read that is an expression', (f) => editJson(f, TASK, (d) => (d.roles[1].read = { owner_id: '%%user.id' })), `${TASK}|roles[1].read|sync.role.read.boolean`],
    ['a role write that is an expression', (f) => editJson(f, TASK, (d) => (d.roles[1].write = { '%%user.id': 'x' })), `${TASK}|roles[1].write|sync.role.write.boolean`],
    ['an apply_when reading the document', (f) => editJson(f, TASK, (d) => (d.roles[1].apply_when = { '%%root.owner_id': '%%user.id' })), `${TASK}|roles[1].apply_when|sync.role.apply_when.document`],
    ['a default rule on a non-queryable field', (f) => editJson(f, 'data_sources/mongodb-atlas/default_rule.json', (d) => (d.roles[0].document_filters.read = { secret: true })), 'data_sources/mongodb-atlas/default_rule.json|roles[0].document_filters.read|sync.role.document_filters.queryable'],
  ];

  it.each(roleCases)('accepts %s with a warning naming the file, path and rule', (_name, change, expected) => {
    const files = exported();
    change(files);
    const { violations, warnings } = loadApp(files);
    expect(violations).toEqual([]);
    const found = warnings.map((w) => `${w.file}|${w.path}|${w.rule}`);
    expect(found, found.join('\n')).toContain(expected);
    expect(warnings.find((w) => `${w.file}|${w.path}|${w.rule}` === expected)?.message).toMatch(/is not sync compatible \(a sync session it applies to is denied\)/);
  });

  it('hands the warnings to the caller of validateApp', () => {
    const files = exported();
    editJson(files, TASK, (d) => (d.roles[1].read = { owner_id: '%%user.id' }));
    const warnings: ConfigViolation[] = [];
    expect(validateApp(readAppFiles(files).app, { warnings })).toEqual([]);
    expect(warnings.map((w) => `${w.path}|${w.rule}`)).toEqual(['roles[1].read|sync.role.read.boolean']);
  });

  it('allows a queryable field named only for its collection and _id in document filters', () => {
    const files = exported();
    editJson(files, TASK, (d) => (d.roles[1].document_filters.read = { $and: [{ status: { $ne: 'archived' } }, { _id: { $exists: true } }, { owner_id: '%%user.id' }] }));
    expect(loadApp(files)).toMatchObject({ violations: [], warnings: [] });
  });

  it('checks roles only while flexible sync is enabled', () => {
    const files = exported();
    editJson(files, SYNC, (d) => (d.state = 'disabled'));
    editJson(files, TASK, (d) => (d.roles[1].read = { owner_id: '%%user.id' }));
    expect(loadApp(files)).toMatchObject({ violations: [], warnings: [] });
  });

  it('validates the older config.flexible_sync of a cluster service the same way', () => {
    const files = exported();
    files.delete(SYNC);
    editJson(files, 'data_sources/mongodb-atlas/config.json', (d) => (d.config.flexible_sync = { state: 'enabled', database_name: 'taskboard', queryable_fields_names: ['owner_id', 'owner_id'], permissions: { rules: {}, defaultRoles: [] } }));
    expect(rules(files)).toContain('data_sources/mongodb-atlas/config.json|config.flexible_sync.queryable_fields_names[1]|sync.queryable_fields_names.duplicate');
  });

  it('refuses enabling both sync modes at once', () => {
    const files = exported();
    editJson(files, 'data_sources/mongodb-atlas/config.json', (d) => (d.config.sync = { state: 'enabled', database_name: 'x', partition: { key: 'owner_id', type: 'string', permissions: { read: true, write: true } } }));
    expect(rules(files)).toContain(`${SYNC}|type|sync.mode.multiple`);
  });
});

describe('fieldsReadBy', () => {
  it('collects query keys through logical operators and document expansions, not operators or user expansions', () => {
    const filter = { $or: [{ owner_id: '%%user.id' }, { 'meta.team': { $in: '%%user.custom_data.teams' } }], '%%root.status': 'open', $nor: [{ done: true }] };
    expect([...fieldsReadBy(filter)].sort()).toEqual(['done', 'meta', 'owner_id', 'status']);
    expect([...fieldsReadBy(true)]).toEqual([]);
  });
});
