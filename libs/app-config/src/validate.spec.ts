import { loadApp, readAppFiles, validateApp, type AppFiles } from './index';
import { editJson, exampleTodo, jsonOf, put, type Doc } from './__fixtures__/app-files';

const ITEMS = 'services/mongodb-atlas/rules/todo.items.json';
const LISTS = 'services/mongodb-atlas/rules/todo.lists.json';
const USERS = 'services/mongodb-atlas/rules/todo.users.json';
const ATLAS = 'services/mongodb-atlas/config.json';
const SYNC = 'sync/config.json';
const long = (n: number) => 'x'.repeat(n);

const lake = (files: AppFiles, extra: Doc = {}) =>
  put(files, 'services/lake/config.json', { name: 'lake', type: 'datalake', config: { dataLakeName: 'Lake0', ...extra } });
const http = (files: AppFiles, extra: Doc = {}) => put(files, 'services/http/config.json', { name: 'http', type: 'http', ...extra });
const hook = (files: AppFiles, config: Doc, source: string | null = 'exports = () => 1;\n', service = 'http') => {
  put(files, `services/${service}/incoming_webhooks/hook/config.json`, { name: 'hook', ...config });
  if (source !== null) put(files, `services/${service}/incoming_webhooks/hook/source.js`, source);
};
const trigger = (files: AppFiles, t: Doc, file = 'triggers/onItem.json') =>
  put(files, file, {
    name: 'onItem',
    type: 'DATABASE',
    function_name: 'sum',
    config: { service_name: 'mongodb-atlas', database: 'todo', collection: 'items', operation_types: ['INSERT'] },
    disabled: false,
    ...t,
  });
const hosting = (files: AppFiles, metadata: unknown) => {
  put(files, 'hosting/files/index.html', '<h1>todo</h1>\n');
  put(files, 'hosting/metadata.json', metadata);
};

interface Case {
  name: string;
  change: (files: AppFiles) => void;
  file: string;
  path: string;
  rule: string;
}

// Each case breaks exactly one rule of a valid app (examples/todo) and expects exactly that violation.
const cases: Case[] = [
  // application settings (2.2, 8)
  { name: 'an empty app name', change: (f) => editJson(f, 'config.json', (d) => (d.name = '')), file: 'config.json', path: 'name', rule: 'app.name.required' },
  { name: 'an app name of 33 characters', change: (f) => editJson(f, 'config.json', (d) => (d.name = long(33))), file: 'config.json', path: 'name', rule: 'app.name.length' },
  { name: 'an app name with a space', change: (f) => editJson(f, 'config.json', (d) => (d.name = 'my todo')), file: 'config.json', path: 'name', rule: 'app.name.charset' },
  { name: 'a refresh token lifetime under 30 minutes', change: (f) => editJson(f, 'config.json', (d) => (d.security = { refresh_token_expiration_seconds: 600 })), file: 'config.json', path: 'security.refresh_token_expiration_seconds', rule: 'app.refresh_token_expiration' },
  { name: 'an allowed origin that is not a URL', change: (f) => editJson(f, 'config.json', (d) => (d.security = { allowed_request_origins: ['example.com'] })), file: 'config.json', path: 'security.allowed_request_origins[0]', rule: 'app.allowed_request_origins.url' },
  { name: 'a custom domain that is not a domain', change: (f) => editJson(f, 'config.json', (d) => (d.hosting = { custom_domain: 'not a domain' })), file: 'config.json', path: 'hosting.custom_domain', rule: 'app.hosting.domain' },
  { name: 'hosting.enabled that is not a boolean', change: (f) => editJson(f, 'config.json', (d) => (d.hosting = { enabled: 'yes' })), file: 'config.json', path: 'hosting.enabled', rule: 'field.type' },
  { name: 'custom user data in an unknown service', change: (f) => editJson(f, 'config.json', (d) => (d.custom_user_data_config.mongo_service_id = 'nope')), file: 'config.json', path: 'custom_user_data_config.mongo_service_id', rule: 'app.custom_user_data.service' },
  { name: 'custom user data without a collection', change: (f) => editJson(f, 'config.json', (d) => delete d.custom_user_data_config.collection_name), file: 'config.json', path: 'custom_user_data_config.collection_name', rule: 'app.custom_user_data.required' },
  // auth providers (2.3)
  { name: 'an auth provider without a type', change: (f) => editJson(f, 'auth_providers/anon-user.json', (d) => delete d.type), file: 'auth_providers/anon-user.json', path: 'type', rule: 'auth_provider.type.required' },
  { name: 'two auth providers with one name', change: (f) => put(f, 'auth_providers/anon2.json', { name: 'anon-user', type: 'anon-user' }), file: 'auth_providers/anon2.json', path: 'name', rule: 'auth_provider.name.unique' },
  { name: 'a secret_config naming a missing secret', change: (f) => editJson(f, 'auth_providers/local-userpass.json', (d) => (d.secret_config = { clientSecret: 'nope' })), file: 'auth_providers/local-userpass.json', path: 'secret_config.clientSecret', rule: 'secret_config.secret.missing' },
  { name: 'a metadata field without required', change: (f) => editJson(f, 'auth_providers/local-userpass.json', (d) => (d.metadata_fields = [{ name: 'email' }])), file: 'auth_providers/local-userpass.json', path: 'metadata_fields[0]', rule: 'auth_provider.metadata_fields.item' },
  // functions (2.4)
  { name: 'a function without source.js', change: (f) => f.delete('functions/sum/source.js'), file: 'functions/sum/source.js', path: '', rule: 'function.source.missing' },
  { name: 'a function with an empty source.js', change: (f) => put(f, 'functions/sum/source.js', '  \n'), file: 'functions/sum/source.js', path: '', rule: 'function.source.missing' },
  { name: 'two functions with one name', change: (f) => { put(f, 'functions/sum2/config.json', { name: 'sum' }); put(f, 'functions/sum2/source.js', 'exports = () => 2;\n'); }, file: 'functions/sum2/config.json', path: 'name', rule: 'function.name.unique' },
  { name: 'a function without a name', change: (f) => editJson(f, 'functions/sum/config.json', (d) => delete d.name), file: 'functions/sum/config.json', path: 'name', rule: 'function.name.required' },
  { name: 'a function name that climbs out of functions/', change: (f) => editJson(f, 'functions/sum/config.json', (d) => (d.name = '../../evil')), file: 'functions/sum/config.json', path: 'name', rule: 'function.name.path' },
  { name: 'a function name with a backslash', change: (f) => editJson(f, 'functions/sum/config.json', (d) => (d.name = 'a\\b')), file: 'functions/sum/config.json', path: 'name', rule: 'function.name.path' },
  { name: 'a function whose source does not compile', change: (f) => put(f, 'functions/sum/source.js', 'exports = function (a, b) {\n  return a +;\n};\n'), file: 'functions/sum/source.js', path: '', rule: 'function.source.syntax' },
  { name: 'a function whose private flag is a string', change: (f) => editJson(f, 'functions/sum/config.json', (d) => (d.private = 'yes')), file: 'functions/sum/config.json', path: 'private', rule: 'field.type' },
  // services (2.5, 2.8, 8)
  { name: 'a service name with a space', change: (f) => http(f, { name: 'my http' }), file: 'services/http/config.json', path: 'name', rule: 'service.name.charset' },
  { name: 'a service name of 65 characters', change: (f) => http(f, { name: long(65) }), file: 'services/http/config.json', path: 'name', rule: 'service.name.length' },
  { name: 'two services with one name', change: (f) => put(f, 'services/other/config.json', { name: 'mongodb-atlas', type: 'http' }), file: 'services/other/config.json', path: 'name', rule: 'service.name.unique' },
  { name: 'a service without a type', change: (f) => put(f, 'services/http/config.json', { name: 'http' }), file: 'services/http/config.json', path: 'type', rule: 'service.type.required' },
  { name: 'a service secret_config naming a missing secret', change: (f) => http(f, { secret_config: { apiKey: 'missing' } }), file: 'services/http/config.json', path: 'secret_config.apiKey', rule: 'secret_config.secret.missing' },
  { name: 'both clusterName and dataLakeName', change: (f) => editJson(f, ATLAS, (d) => (d.config.dataLakeName = 'Lake0')), file: ATLAS, path: 'config.dataLakeName', rule: 'datasource.link.exactly_one' },
  { name: 'neither clusterName nor dataLakeName', change: (f) => editJson(f, ATLAS, (d) => delete d.config.clusterName), file: ATLAS, path: 'config.clusterName', rule: 'datasource.link.exactly_one' },
  { name: 'an unknown readPreference', change: (f) => editJson(f, ATLAS, (d) => (d.config.readPreference = 'fastest')), file: ATLAS, path: 'config.readPreference', rule: 'datasource.read_preference.value' },
  { name: 'a federated source linked by clusterName', change: (f) => put(f, 'services/lake/config.json', { name: 'lake', type: 'datalake', config: { clusterName: 'Cluster0' } }), file: 'services/lake/config.json', path: 'config.clusterName', rule: 'datasource.federated.cluster_name' },
  { name: 'a readPreference on a federated source', change: (f) => lake(f, { readPreference: 'primary' }), file: 'services/lake/config.json', path: 'config.readPreference', rule: 'datasource.federated.read_preference' },
  { name: 'sync embedded in a federated source', change: (f) => lake(f, { sync: { state: 'enabled' } }), file: 'services/lake/config.json', path: 'config.sync', rule: 'datasource.federated.sync' },
  { name: 'rules on a federated source', change: (f) => { lake(f); put(f, 'services/lake/rules/db.coll.json', { database: 'db', collection: 'coll', roles: [{ name: 'all' }] }); }, file: 'services/lake/rules/db.coll.json', path: 'roles', rule: 'datasource.federated.rules' },
  { name: 'a schema on a federated source', change: (f) => { lake(f); put(f, 'services/lake/rules/db.coll.json', { database: 'db', collection: 'coll', schema: { bsonType: 'object' } }); }, file: 'services/lake/rules/db.coll.json', path: 'schema', rule: 'datasource.federated.schema' },
  { name: 'a default rule on a federated source', change: (f) => { lake(f); put(f, 'services/lake/default_rule.json', { roles: [{ name: 'all' }] }); }, file: 'services/lake/default_rule.json', path: 'roles', rule: 'datasource.federated.rules' },
  { name: 'sync of a federated source', change: (f) => { lake(f); editJson(f, SYNC, (d) => (d.service_name = 'lake')); }, file: SYNC, path: 'service_name', rule: 'datasource.federated.sync' },
  { name: 'collection rules on an external service', change: (f) => { http(f); put(f, 'services/http/rules/db.coll.json', { database: 'db', collection: 'coll' }); }, file: 'services/http/rules/db.coll.json', path: '', rule: 'rule.service_type' },
  // roles and filters (2.7, 8)
  { name: 'a role without a name', change: (f) => editJson(f, ITEMS, (d) => delete d.roles[0].name), file: ITEMS, path: 'roles[0].name', rule: 'role.name.required' },
  { name: 'a role name of 101 characters', change: (f) => editJson(f, ITEMS, (d) => (d.roles[0].name = long(101))), file: ITEMS, path: 'roles[0].name', rule: 'role.name.length' },
  { name: 'two roles with one name in a collection', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].name = 'owner')), file: ITEMS, path: 'roles[1].name', rule: 'role.name.unique' },
  { name: 'two roles with one name in a default rule', change: (f) => put(f, 'services/mongodb-atlas/default_rule.json', { roles: [{ name: 'r' }, { name: 'r' }] }), file: 'services/mongodb-atlas/default_rule.json', path: 'roles[1].name', rule: 'role.name.unique' },
  { name: 'a field permission that is not an object', change: (f) => editJson(f, ITEMS, (d) => (d.roles[0].fields = { summary: true })), file: ITEMS, path: 'roles[0].fields.summary', rule: 'role.fields.shape' },
  { name: 'a filter without a name', change: (f) => editJson(f, ITEMS, (d) => (d.filters = [{ query: {} }])), file: ITEMS, path: 'filters[0].name', rule: 'filter.name.required' },
  { name: 'a filter name of 101 characters', change: (f) => editJson(f, ITEMS, (d) => (d.filters = [{ name: long(101) }])), file: ITEMS, path: 'filters[0].name', rule: 'filter.name.length' },
  { name: 'two filters with one name', change: (f) => editJson(f, ITEMS, (d) => (d.filters = [{ name: 'f' }, { name: 'f' }])), file: ITEMS, path: 'filters[1].name', rule: 'filter.name.unique' },
  { name: 'a projection mixing inclusion and exclusion', change: (f) => editJson(f, ITEMS, (d) => (d.filters = [{ name: 'f', projection: { summary: 1, owner_id: 0 } }])), file: ITEMS, path: 'filters[0].projection', rule: 'filter.projection.mixed' },
  { name: 'a filter apply_when using a document expansion', change: (f) => editJson(f, ITEMS, (d) => (d.filters = [{ name: 'f', apply_when: { '%%root.owner_id': '%%user.id' } }])), file: ITEMS, path: 'filters[0].apply_when', rule: 'filter.apply_when.document_expansion' },
  // rule expressions and members: refused at the gate, not by every later data call (issue 14, item 7)
  { name: 'a role member that does not exist', change: (f) => editJson(f, ITEMS, (d) => (d.roles[0].raed = true)), file: ITEMS, path: 'roles[0].raed', rule: 'role.field.unknown' },
  { name: 'a filter member that does not exist', change: (f) => editJson(f, ITEMS, (d) => (d.filters = [{ name: 'f', query: {}, apply: {} }])), file: ITEMS, path: 'filters[0].apply', rule: 'filter.field.unknown' },
  { name: 'a field permission member that does not exist', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].fields = { summary: { read: true, hidden: true } })), file: ITEMS, path: 'roles[1].fields.summary.hidden', rule: 'role.field.unknown' },
  { name: 'an unknown operator in apply_when', change: (f) => editJson(f, ITEMS, (d) => (d.roles[0].apply_when = { owner_id: { $foo: 1 } })), file: ITEMS, path: 'roles[0].apply_when.owner_id.$foo', rule: 'rule.expression.invalid' },
  { name: 'an unknown expansion in read', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].read = { '%%usr.id': 'x' })), file: ITEMS, path: 'roles[1].read.%%usr.id', rule: 'rule.expression.invalid' },
  { name: 'an expression that is a string in write', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].write = 'yes')), file: ITEMS, path: 'roles[1].write', rule: 'rule.expression.invalid' },
  { name: 'an unknown operator in insert', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].insert = { '%%user.id': { '%notAnOperator': 1 } })), file: ITEMS, path: 'roles[1].insert.%%user.id.%notAnOperator', rule: 'rule.expression.invalid' },
  { name: 'a bad expression in delete', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].delete = { owner_id: { $in: 3 } })), file: ITEMS, path: 'roles[1].delete.owner_id.$in', rule: 'rule.expression.invalid' },
  { name: 'a bad expression in document_filters.write', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].document_filters = { read: true, write: { '%%partition': 'x' } })), file: ITEMS, path: 'roles[1].document_filters.write.%%partition', rule: 'rule.expression.invalid' },
  { name: 'a bad expression in a field permission', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].fields = { summary: { fields: { text: { read: { $eq: 1 } } } } })), file: ITEMS, path: 'roles[1].fields.summary.fields.text.read.$eq', rule: 'rule.expression.invalid' },
  { name: 'a bad expression in additional_fields', change: (f) => editJson(f, ITEMS, (d) => (d.roles[1].additional_fields = { read: { '%function': 'nope' } })), file: ITEMS, path: 'roles[1].additional_fields.read.%function', rule: 'rule.expression.invalid' },
  { name: 'a filter query using a document expansion', change: (f) => editJson(f, ITEMS, (d) => (d.filters = [{ name: 'f', query: { owner_id: '%%root.owner_id' } }])), file: ITEMS, path: 'filters[0].query.owner_id', rule: 'rule.expression.invalid' },
  { name: 'an unknown operator in a default rule', change: (f) => put(f, 'services/mongodb-atlas/default_rule.json', { roles: [{ name: 'all', apply_when: { '%%user.id': { $regex: 'x' } }, read: true }] }), file: 'services/mongodb-atlas/default_rule.json', path: 'roles[0].apply_when.%%user.id.$regex', rule: 'rule.expression.invalid' },
  { name: 'an unknown operator in a sync permission', change: (f) => editJson(f, SYNC, (d) => (d.partition.permissions.write = { '%%partition': { $like: '%%user.id' } })), file: SYNC, path: 'partition.permissions.write.%%partition.$like', rule: 'rule.expression.invalid' },
  { name: 'a document expansion in a sync permission', change: (f) => editJson(f, SYNC, (d) => (d.partition.permissions.read = { '%%root.owner_id': '%%user.id' })), file: SYNC, path: 'partition.permissions.read.%%root.owner_id', rule: 'rule.expression.invalid' },
  { name: 'a collection name that climbs out of its directory', change: (f) => editJson(f, USERS, (d) => (d.collection = '..')), file: USERS, path: 'collection', rule: 'rule.collection.name' },
  { name: 'a database name with a slash', change: (f) => editJson(f, USERS, (d) => (d.database = 'a/b')), file: USERS, path: 'database', rule: 'rule.database.name' },
  { name: 'a collection rule without a collection', change: (f) => editJson(f, USERS, (d) => delete d.collection), file: USERS, path: 'collection', rule: 'rule.collection.required' },
  { name: 'two rules for one collection', change: (f) => put(f, 'services/mongodb-atlas/rules/copy.json', { database: 'todo', collection: 'users', roles: [] }), file: USERS, path: 'collection', rule: 'rule.namespace.unique' },
  // schemas and relationships (2.7)
  { name: 'an unknown field type', change: (f) => editJson(f, ITEMS, (d) => (d.schema.properties.summary.bsonType = 'text')), file: ITEMS, path: 'schema.properties.summary.bsonType', rule: 'schema.bsonType.unknown' },
  { name: 'a collection schema that is not an object schema', change: (f) => editJson(f, USERS, (d) => (d.schema = { bsonType: 'array', properties: { _partition: { bsonType: 'string' } } })), file: USERS, path: 'schema.bsonType', rule: 'schema.root.object' },
  { name: 'a relationship ref of the wrong form', change: (f) => editJson(f, ITEMS, (d) => (d.relationships.list_id.ref = 'todo.lists')), file: ITEMS, path: 'relationships.list_id.ref', rule: 'relationship.ref.format' },
  { name: 'a relationship to an unknown service', change: (f) => editJson(f, ITEMS, (d) => (d.relationships.list_id.ref = '#/relationship/other/todo/lists')), file: ITEMS, path: 'relationships.list_id.ref', rule: 'relationship.ref.service' },
  { name: 'a relationship to a collection without schema', change: (f) => editJson(f, ITEMS, (d) => (d.relationships.list_id.ref = '#/relationship/mongodb-atlas/todo/users')), file: ITEMS, path: 'relationships.list_id.ref', rule: 'relationship.ref.target' },
  { name: 'a relationship source_key not in the schema', change: (f) => editJson(f, ITEMS, (d) => (d.relationships.list_id.source_key = 'listId')), file: ITEMS, path: 'relationships.list_id.source_key', rule: 'relationship.source_key.schema' },
  { name: 'a relationship foreign_key not in the foreign schema', change: (f) => editJson(f, ITEMS, (d) => (d.relationships.list_id.foreign_key = 'uuid')), file: ITEMS, path: 'relationships.list_id.foreign_key', rule: 'relationship.foreign_key.schema' },
  { name: 'a relationship without foreign_key', change: (f) => editJson(f, ITEMS, (d) => delete d.relationships.list_id.foreign_key), file: ITEMS, path: 'relationships.list_id.foreign_key', rule: 'relationship.foreign_key.required' },
  { name: 'a relationship is_list that is not a boolean', change: (f) => editJson(f, ITEMS, (d) => (d.relationships.list_id.is_list = 'no')), file: ITEMS, path: 'relationships.list_id.is_list', rule: 'field.type' },
  { name: 'a to-many relationship on a field that is not an array', change: (f) => editJson(f, ITEMS, (d) => (d.relationships.list_id.is_list = true)), file: ITEMS, path: 'relationships.list_id.is_list', rule: 'relationship.is_list.array' },
  { name: 'two functions with one id', change: (f) => { const id = jsonOf(f, 'functions/sum/config.json') as Doc; editJson(f, 'functions/greet/config.json', (d) => (d.id = id.id)); }, file: 'functions/sum/config.json', path: 'id', rule: 'id.unique' },
  // sync (2.6, 8)
  { name: 'a partition key type outside String, ObjectID, Long, UUID', change: (f) => editJson(f, SYNC, (d) => (d.partition.type = 'int32')), file: SYNC, path: 'partition.type', rule: 'sync.partition.type.value' },
  { name: 'a synced schema without the partition key', change: (f) => editJson(f, LISTS, (d) => { delete d.schema.properties._partition; d.schema.required = ['_id', 'owner_id', 'name']; }), file: LISTS, path: 'schema.properties', rule: 'sync.partition.key.missing' },
  { name: 'a partition key whose schema type differs', change: (f) => editJson(f, ITEMS, (d) => (d.schema.properties._partition.bsonType = 'objectId')), file: ITEMS, path: 'schema.properties._partition.bsonType', rule: 'sync.partition.key.type' },
  { name: 'an unknown sync state', change: (f) => editJson(f, SYNC, (d) => (d.state = 'on')), file: SYNC, path: 'state', rule: 'sync.state.value' },
  { name: 'an unknown sync type', change: (f) => editJson(f, SYNC, (d) => (d.type = 'mirror')), file: SYNC, path: 'type', rule: 'sync.type.value' },
  { name: 'sync of an unknown service', change: (f) => editJson(f, SYNC, (d) => (d.service_name = 'nope')), file: SYNC, path: 'service_name', rule: 'sync.service.missing' },
  { name: 'partition sync without service_name', change: (f) => editJson(f, SYNC, (d) => delete d.service_name), file: SYNC, path: 'service_name', rule: 'sync.service_name.required' },
  { name: 'partition sync without a key', change: (f) => editJson(f, SYNC, (d) => delete d.partition.key), file: SYNC, path: 'partition.key', rule: 'sync.partition.key.required' },
  { name: 'a second synced cluster', change: (f) => put(f, 'services/second/config.json', { name: 'second', type: 'mongodb-atlas', config: { clusterName: 'Cluster1', sync: { state: 'enabled', database_name: 'x', partition: { key: '_partition', type: 'string' } } } }), file: 'services/second/config.json', path: 'config.sync', rule: 'sync.cluster.multiple' },
  { name: 'a second partition key', change: (f) => put(f, 'services/second/config.json', { name: 'second', type: 'mongodb-atlas', config: { clusterName: 'Cluster1', sync: { state: 'disabled', partition: { key: 'owner_id', type: 'string' } } } }), file: 'services/second/config.json', path: 'config.sync.partition.key', rule: 'sync.partition.key.multiple' },
  { name: 'development mode without database_name', change: (f) => editJson(f, SYNC, (d) => { d.development_mode_enabled = true; delete d.database_name; }), file: SYNC, path: 'database_name', rule: 'sync.database_name.required' },
  { name: 'a negative client_max_offline_days', change: (f) => editJson(f, SYNC, (d) => (d.client_max_offline_days = -1)), file: SYNC, path: 'client_max_offline_days', rule: 'sync.client_max_offline_days.value' },
  // incoming webhooks and service rules (2.8)
  { name: 'a webhook on a data source', change: (f) => hook(f, {}, 'exports = () => 1;\n', 'mongodb-atlas'), file: 'services/mongodb-atlas/incoming_webhooks/hook/config.json', path: '', rule: 'webhook.service_type' },
  { name: 'a webhook with a field webhooks do not have', change: (f) => { http(f); hook(f, { schedule: '* * * * *' }); }, file: 'services/http/incoming_webhooks/hook/config.json', path: 'schedule', rule: 'webhook.field.unknown' },
  { name: 'a webhook with an unknown HTTP method', change: (f) => { http(f); hook(f, { options: { httpMethod: 'FETCH' } }); }, file: 'services/http/incoming_webhooks/hook/config.json', path: 'options.httpMethod', rule: 'webhook.http_method.value' },
  { name: 'a webhook with an unknown validation method', change: (f) => { http(f); hook(f, { options: { validationMethod: 'TRUST_ME' } }); }, file: 'services/http/incoming_webhooks/hook/config.json', path: 'options.validationMethod', rule: 'webhook.validation_method.value' },
  { name: 'a webhook without source.js', change: (f) => { http(f); hook(f, { respond_result: true }, null); }, file: 'services/http/incoming_webhooks/hook/source.js', path: '', rule: 'webhook.source.missing' },
  { name: 'a webhook whose source does not compile', change: (f) => { http(f); hook(f, {}, 'exports = function( {'); }, file: 'services/http/incoming_webhooks/hook/source.js', path: '', rule: 'webhook.source.syntax' },
  { name: 'a service rule name with a slash', change: (f) => { http(f); put(f, 'services/http/rules/get.json', { name: 'get/all', actions: ['get'], when: {} }); }, file: 'services/http/rules/get.json', path: 'name', rule: 'service_rule.name.charset' },
  { name: 'a service rule whose actions are not a list', change: (f) => { http(f); put(f, 'services/http/rules/get.json', { name: 'get', actions: 'get' }); }, file: 'services/http/rules/get.json', path: 'actions', rule: 'service_rule.actions.type' },
  { name: 'a webhook whose secretAsQueryParam is not a boolean', change: (f) => { http(f); hook(f, { options: { secret: 's', secretAsQueryParam: 'yes' } }); }, file: 'services/http/incoming_webhooks/hook/config.json', path: 'options.secretAsQueryParam', rule: 'field.type' },
  // triggers (2.9)
  { name: 'a trigger naming a missing function', change: (f) => trigger(f, { function_name: 'nope' }), file: 'triggers/onItem.json', path: 'function_name', rule: 'trigger.function.missing' },
  { name: 'a trigger name with a dot', change: (f) => trigger(f, { name: 'on.item' }), file: 'triggers/onItem.json', path: 'name', rule: 'trigger.name.charset' },
  { name: 'a trigger name of 65 characters', change: (f) => trigger(f, { name: long(65) }), file: 'triggers/onItem.json', path: 'name', rule: 'trigger.name.length' },
  { name: 'a trigger without a function', change: (f) => trigger(f, { function_name: undefined }), file: 'triggers/onItem.json', path: 'function_name', rule: 'trigger.function.required' },
  { name: 'a trigger on an unknown service', change: (f) => trigger(f, { config: { service_name: 'nope' } }), file: 'triggers/onItem.json', path: 'config.service_name', rule: 'trigger.service.missing' },
  { name: 'two triggers with one name', change: (f) => { trigger(f, {}); trigger(f, {}, 'triggers/onItem2.json'); }, file: 'triggers/onItem2.json', path: 'name', rule: 'trigger.name.unique' },
  { name: 'a trigger whose disabled flag is a string', change: (f) => trigger(f, { disabled: 'no' }), file: 'triggers/onItem.json', path: 'disabled', rule: 'field.type' },
  // values and secrets (2.11)
  { name: 'two values with one name', change: (f) => put(f, 'values/greeting2.json', { name: 'greeting', value: 'Hi' }), file: 'values/greeting2.json', path: 'name', rule: 'value.name.unique' },
  { name: 'a value from a missing secret', change: (f) => put(f, 'values/apiKey.json', { name: 'apiKey', from_secret: true, value: 'apiKeySecret' }), file: 'values/apiKey.json', path: 'value', rule: 'value.secret.missing' },
  { name: 'a value name with a slash', change: (f) => put(f, 'values/up.json', { name: '../up', value: 'x' }), file: 'values/up.json', path: 'name', rule: 'value.name.path' },
  { name: 'a value without a value', change: (f) => put(f, 'values/empty.json', { name: 'empty' }), file: 'values/empty.json', path: 'value', rule: 'value.value.required' },
  { name: 'a secret whose value is not a string', change: (f) => put(f, 'secrets.json', { apiKey: 42 }), file: 'secrets.json', path: 'apiKey', rule: 'secrets.value.type' },
  // hosting (2.10)
  { name: 'a hosting path without a leading slash', change: (f) => hosting(f, [{ path: '/index.html', attrs: [] }, { path: 'about.html', attrs: [] }]), file: 'hosting/metadata.json', path: '[1].path', rule: 'hosting.path.format' },
  { name: 'a hosting path that climbs out of hosting/files', change: (f) => hosting(f, [{ path: '/../../config.json', attrs: [] }]), file: 'hosting/metadata.json', path: '[0].path', rule: 'hosting.path.format' },
  { name: 'hosting metadata for a missing file', change: (f) => hosting(f, [{ path: '/gone.html', attrs: [] }]), file: 'hosting/metadata.json', path: '[0].path', rule: 'hosting.file.missing' },
  { name: 'a hosting attribute without a value', change: (f) => hosting(f, [{ path: '/index.html', attrs: [{ name: 'Cache-Control' }] }]), file: 'hosting/metadata.json', path: '[0].attrs[0]', rule: 'hosting.attr.shape' },
  { name: 'a hosting attribute App Services did not have', change: (f) => hosting(f, [{ path: '/index.html', attrs: [{ name: 'Set-Cookie', value: 'a=b' }] }]), file: 'hosting/metadata.json', path: '[0].attrs[0].name', rule: 'hosting.attr.name' },
  { name: 'a custom error page that is not a resource path', change: (f) => editJson(f, 'config.json', (d) => (d.hosting = { enabled: true, default_error_path: '../404.html' })), file: 'config.json', path: 'hosting.default_error_path', rule: 'hosting.path.format' },
  { name: 'a default response code that is not a status', change: (f) => editJson(f, 'config.json', (d) => (d.hosting = { enabled: true, default_response_code: 'ok' })), file: 'config.json', path: 'hosting.default_response_code', rule: 'app.hosting.response_code' },
  // declared indexes (Tessera: created on the cluster at deploy)
  { name: 'indexes that are not a list', change: (f) => editJson(f, ITEMS, (d) => (d.indexes = { owner_id: 1 })), file: ITEMS, path: 'indexes', rule: 'rule.indexes.type' },
  { name: 'an index without a key', change: (f) => editJson(f, ITEMS, (d) => (d.indexes = [{ name: 'x' }])), file: ITEMS, path: 'indexes[0].key', rule: 'rule.indexes.key.required' },
  { name: 'a text index', change: (f) => editJson(f, ITEMS, (d) => (d.indexes = [{ key: { summary: 'text' } }])), file: ITEMS, path: 'indexes[0].key.summary', rule: 'rule.indexes.key.direction' },
  { name: 'an index on a $-prefixed field', change: (f) => editJson(f, ITEMS, (d) => (d.indexes = [{ key: { $where: 1 } }])), file: ITEMS, path: 'indexes[0].key', rule: 'rule.indexes.key.field' },
  { name: 'an index option the engine lacks', change: (f) => editJson(f, ITEMS, (d) => (d.indexes = [{ key: { owner_id: 1 }, expireAfterSeconds: 60 }])), file: ITEMS, path: 'indexes[0].expireAfterSeconds', rule: 'rule.indexes.option' },
  { name: 'unique that is not a boolean', change: (f) => editJson(f, ITEMS, (d) => (d.indexes = [{ key: { owner_id: 1 }, unique: 'yes' }])), file: ITEMS, path: 'indexes[0].unique', rule: 'rule.indexes.option.type' },
  { name: 'two indexes with one (default) name', change: (f) => editJson(f, ITEMS, (d) => (d.indexes = [{ key: { owner_id: 1 } }, { key: { owner_id: 1 }, unique: true }])), file: ITEMS, path: 'indexes[1].key', rule: 'rule.indexes.name.unique' },
  { name: 'a declared _id index', change: (f) => editJson(f, ITEMS, (d) => (d.indexes = [{ key: { _id: 1 } }])), file: ITEMS, path: 'indexes[0]', rule: 'rule.indexes.id' },
  // GraphQL custom resolvers
  { name: 'a custom resolver field name that is not a GraphQL name', change: (f) => put(f, 'graphql/custom_resolvers/query_total.json', { on_type: 'Query', field_name: '../total', function_name: 'sum' }), file: 'graphql/custom_resolvers/query_total.json', path: 'field_name', rule: 'graphql.resolver.name' },
  { name: 'an auth provider name with a slash', change: (f) => editJson(f, 'auth_providers/anon-user.json', (d) => (d.name = 'anon/../user')), file: 'auth_providers/anon-user.json', path: 'name', rule: 'auth_provider.name.path' },
  { name: 'a custom resolver naming a missing function', change: (f) => put(f, 'graphql/custom_resolvers/query_total.json', { on_type: 'Query', field_name: 'total', function_name: 'nope' }), file: 'graphql/custom_resolvers/query_total.json', path: 'function_name', rule: 'graphql.resolver.function' },
];

describe('validateApp', () => {
  it('has at least 40 invalid-configuration cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases)('reports $rule at $file $path for $name', ({ change, file, path, rule }) => {
    const files = exampleTodo();
    change(files);
    const { violations } = loadApp(files);
    expect(violations.map(({ file, path, rule }) => ({ file, path, rule }))).toEqual([{ file, path, rule }]);
    expect(violations[0].message.length).toBeGreaterThan(5);
  });

  it('reports several violations of one directory together', () => {
    const files = exampleTodo();
    editJson(files, 'config.json', (d) => (d.name = 'to do'));
    editJson(files, ATLAS, (d) => (d.config.dataLakeName = 'Lake0'));
    editJson(files, ITEMS, (d) => {
      d.roles[1].name = 'owner';
      d.schema.properties.summary.bsonType = 'varchar';
    });
    editJson(files, SYNC, (d) => (d.partition.type = 'double'));
    files.delete('functions/greet/source.js');
    put(files, 'values/broken.json', '{ "name": "broken", ');
    const { violations } = loadApp(files);
    expect(violations.map(({ file, path, rule }) => `${file} ${path} ${rule}`)).toEqual([
      'config.json name app.name.charset',
      'functions/greet/source.js  function.source.missing',
      'services/mongodb-atlas/config.json config.dataLakeName datasource.link.exactly_one',
      `${ITEMS} roles[1].name role.name.unique`,
      `${ITEMS} schema.properties.summary.bsonType schema.bsonType.unknown`,
      'sync/config.json partition.type sync.partition.type.value',
      'values/broken.json  json.syntax',
    ]);
  });

  it('accepts declared indexes: compound, descending, unique, sparse, named', () => {
    const files = exampleTodo();
    editJson(files, ITEMS, (d) => (d.indexes = [{ key: { owner_id: 1, isComplete: -1 } }, { key: { summary: 1 }, name: 'by_summary', unique: true, sparse: true }]));
    const { app, violations } = loadApp(files);
    expect(violations).toEqual([]);
    const rule = app.services[0].collectionRules.find((r) => r.collection === 'items');
    expect(rule?.indexes).toEqual([{ key: { owner_id: 1, isComplete: -1 } }, { key: { summary: 1 }, name: 'by_summary', unique: true, sparse: true }]);
  });

  it('accepts every spelling of the partition key types, case-insensitively', () => {
    for (const [type, bsonType] of [['String', 'string'], ['objectId', 'objectId'], ['OBJECTID', 'objectId'], ['long', 'long'], ['Long', 'int'], ['int', 'long'], ['uuid', 'uuid'], ['UUID', 'uuid']]) {
      const files = exampleTodo();
      editJson(files, SYNC, (d) => (d.partition.type = type));
      for (const rule of [ITEMS, LISTS]) editJson(files, rule, (d) => (d.schema.properties._partition.bsonType = bsonType));
      expect(loadApp(files).violations, `${type} / ${bsonType}`).toEqual([]);
    }
  });

  it('accepts a value from an existing secret, a datastore-cluster service and an optional partition key', () => {
    const files = exampleTodo();
    put(files, 'secrets.json', { apiKeySecret: 's3cr3t' });
    put(files, 'values/apiKey.json', { name: 'apiKey', from_secret: true, value: 'apiKeySecret' });
    editJson(files, ATLAS, (d) => (d.type = 'datastore-cluster'));
    editJson(files, ITEMS, (d) => (d.schema.properties._partition.bsonType = ['string', 'null']));
    expect(loadApp(files).violations).toEqual([]);
  });

  // What App Services deployed must import (issue 14, item 17): each of these was refused once.
  it.each([
    ['a collection schema without a root bsonType', (f: AppFiles) => editJson(f, LISTS, (d) => delete d.schema.bsonType)],
    ['a collection schema whose root says type: object', (f: AppFiles) => editJson(f, LISTS, (d) => { delete d.schema.bsonType; d.schema.type = 'object'; })],
    ['filters whose projections differ in kind (the query fails only if both apply)', (f: AppFiles) => editJson(f, ITEMS, (d) => (d.filters = [{ name: 'a', projection: { summary: 1, _id: 0 } }, { name: 'b', projection: { owner_id: 0 } }]))],
    ['a required name without a property', (f: AppFiles) => editJson(f, ITEMS, (d) => d.schema.required.push('title'))],
    ['a Stitch-era webhook that runs as the authenticated user', (f: AppFiles) => { http(f); hook(f, { run_as_authed_user: true }); }],
    ['a value that is a number', (f: AppFiles) => put(f, 'values/answer.json', { name: 'answer', value: 42 })],
    ['an empty custom domain', (f: AppFiles) => editJson(f, 'config.json', (d) => (d.hosting = { enabled: false, custom_domain: '' }))],
    ['every role and filter member App Services wrote', (f: AppFiles) => editJson(f, ITEMS, (d) => {
      d.roles[0] = { id: 'r1', name: 'owner', apply_when: { owner_id: '%%user.id' }, document_filters: { read: { owner_id: '%%user.id' }, write: { owner_id: '%%user.id' } }, read: true, write: true, insert: { '%%root.shared': { $exists: false } }, delete: true, search: true, fields: { summary: { read: true, write: false, fields: {} } }, additional_fields: { read: true, write: false } };
      d.filters = [{ name: 'mine', apply_when: { '%%user.data.email': { $exists: true } }, query: { owner_id: '%%user.id' }, projection: { owner_id: 1 } }];
    })],
    ['expressions with %function, %stringToOid, %or, %%values and %%environment', (f: AppFiles) => editJson(f, ITEMS, (d) => {
      d.roles[1].apply_when = { '%or': [{ '%%true': { '%function': { name: 'sum', arguments: [1, 2] } } }, { list_id: { '%stringToOid': '%%user.custom_data.list' } }, { '%%values.flag': true }, { '%%environment.tag': { $in: ['dev', 'qa'] } }] };
    })],
    ['a function in a folder', (f: AppFiles) => { put(f, 'functions/utils/format/config.json', { name: 'utils/format' }); put(f, 'functions/utils/format/source.js', 'exports = (x) => `${x}`;\n'); }],
    // Found in App Services exports on GitHub:
    ["a Stitch webhook's secretAsQueryParam (the admin API v3's form of the validation method)", (f: AppFiles) => { http(f); hook(f, { options: { httpMethod: 'POST', secret: 's', secretAsQueryParam: true } }); }],
    ['a Stitch service rule without actions (one that allowed none)', (f: AppFiles) => { http(f); put(f, 'services/http/rules/none.json', { name: 'none' }); }],
    ['"environment": "none", which the 2020 export wrote for no environment', (f: AppFiles) => editJson(f, 'config.json', (d) => (d.environment = 'none'))],
    ['a Realm float field in a synced schema', (f: AppFiles) => editJson(f, ITEMS, (d) => (d.schema.properties.weight = { bsonType: 'float' }))],
    [
      'a to-many relationship on a dictionary of links (realm-core writes is_list true for it)',
      (f: AppFiles) =>
        editJson(f, ITEMS, (d) => {
          d.schema.properties.listsByName = { bsonType: 'object', properties: {}, additionalProperties: { bsonType: 'objectId' } };
          d.relationships.listsByName = { ref: '#/relationship/mongodb-atlas/todo/lists', source_key: 'listsByName', foreign_key: '_id', is_list: true };
        }),
    ],
    ["an empty attribute in a file's hosting metadata (App Services' deployments wrote them)", (f: AppFiles) => hosting(f, [{ path: '/index.html', attrs: [{}] }])],
  ])('accepts %s', (_name, change) => {
    const files = exampleTodo();
    change(files);
    expect(loadApp(files).violations).toEqual([]);
  });

  it("keeps, with a warning, the relationships App Services' deployments wrote against its docs: from _id, and a synced one on a foreign field other than _id", () => {
    const cases: Array<[(f: AppFiles) => void, string]> = [
      [(f) => editJson(f, ITEMS, (d) => (d.relationships._id = { ref: '#/relationship/mongodb-atlas/todo/lists', source_key: '_id', foreign_key: '_id', is_list: false })), 'relationships._id.source_key|relationship.source_key.id'],
      [(f) => editJson(f, ITEMS, (d) => (d.relationships.list_id.foreign_key = 'owner_id')), 'relationships.list_id.foreign_key|relationship.sync.foreign_key'],
    ];
    for (const [change, expected] of cases) {
      const files = exampleTodo();
      change(files);
      const { violations, warnings } = loadApp(files);
      expect(violations).toEqual([]);
      expect(warnings.map((w) => `${w.path}|${w.rule}`)).toContain(expected);
    }
  });

  it('reports the files of an in-memory app by their current-layout paths', () => {
    const app = readAppFiles(exampleTodo()).app;
    app.functions[0].source = '';
    app.services[0].collectionRules[0].roles![0].name = '';
    expect(validateApp(app).map((v) => `${v.file} ${v.path} ${v.rule}`)).toEqual([
      'functions/addItem/source.js  function.source.missing',
      `${ITEMS} roles[0].name role.name.required`,
    ]);
  });
});
