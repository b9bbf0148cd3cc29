import { emptyApp, type AppConfig } from '@tessera/app-config';
import { graphql, lexicographicSortSchema, printType, type GraphQLNamedType } from 'graphql/index.js';
import { buildGraphqlSchema } from './build-schema';
import { pluralize, singularize } from './inflection';
import { buildGraphqlModel, fieldNameOf, typeNameOf } from './model';

function appWith(schemas: Array<{ collection: string; schema: Record<string, unknown>; relationships?: Record<string, { ref: string; source_key: string; foreign_key: string; is_list: boolean }> }>, graphqlConfig?: Record<string, boolean>): AppConfig {
  const app = emptyApp('t');
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas' },
    rules: [],
    webhooks: [],
    collectionRules: schemas.map((s) => ({ database: 'db', collection: s.collection, schema: s.schema, ...(s.relationships ? { relationships: s.relationships } : {}) })),
  });
  if (graphqlConfig) app.graphql = { config: graphqlConfig, customResolvers: [] };
  return app;
}

function typeSdl(app: AppConfig, name: string): string {
  return printType(lexicographicSortSchema(buildGraphqlSchema(buildGraphqlModel(app))).getType(name) as GraphQLNamedType);
}

describe('App Services names', () => {
  it.each([
    ['note', 'Note'],
    ['projects', 'Project'],
    ['task_log', 'Task_log'],
    ['phenomena', 'Phenomena'],
    ['MemberStatsData', 'MemberStatsDatum'],
    ['CommentRevisions', 'CommentRevision'],
    ['categories', 'Category'],
    ['mice', 'Mouse'],
  ])('names the type of title %s as %s', (title, type) => {
    expect(typeNameOf(title)).toBe(type);
  });

  it('pluralises like Rails, falling back to +s when the plural equals the singular', () => {
    expect(pluralize('Category')).toBe('Categories');
    expect(pluralize('Mouse')).toBe('Mice');
    expect(pluralize('Phenomena')).toBe('Phenomenas');
    expect(singularize('people')).toBe('person');
    const model = buildGraphqlModel(appWith([{ collection: 'sheep', schema: { title: 'sheep', properties: { _id: { bsonType: 'objectId' } } } }]));
    expect(model.collections[0]).toMatchObject({ name: 'Sheep', singular: 'sheep', plural: 'sheeps' });
  });

  it('uses singular + s plurals when natural pluralization is off', () => {
    const model = buildGraphqlModel(appWith([{ collection: 'mice', schema: { title: 'Mouse', properties: { _id: { bsonType: 'objectId' } } } }], { use_natural_pluralization: false }));
    expect(model.collections[0]).toMatchObject({ singular: 'mouse', plural: 'mouses' });
    expect(model.introspection).toBe(true);
  });

  it('camel-cases field names with unsupported characters and omits __ fields', () => {
    expect(fieldNameOf('Assigned reviewer of QA step')).toBe('AssignedReviewerOfQAStep');
    expect(fieldNameOf('review_notes')).toBe('review_notes');
    expect(fieldNameOf('2nd place')).toBe('ndPlace');
    expect(fieldNameOf('__v')).toBeUndefined();
  });

  it('generates the observed assignment vector (A.7)', () => {
    const app = appWith([
      {
        collection: 'assignments',
        schema: { title: 'assignment', required: ['type', 'memberId'], properties: { _id: { bsonType: 'objectId' }, categoryId: { bsonType: 'string' }, project_id: { bsonType: 'int' }, type: { bsonType: 'string' }, memberId: { bsonType: 'string' } } },
        relationships: {
          categoryId: { ref: '#/relationship/mongodb-atlas/db/categories', source_key: 'categoryId', foreign_key: 'category_id', is_list: false },
          project_id: { ref: '#/relationship/mongodb-atlas/db/projects', source_key: 'project_id', foreign_key: 'project_id', is_list: false },
          memberId: { ref: '#/relationship/mongodb-atlas/db/members', source_key: 'memberId', foreign_key: 'memberId', is_list: false },
        },
      },
      { collection: 'categories', schema: { title: 'category', properties: { category_id: { bsonType: 'string' } } } },
      { collection: 'projects', schema: { title: 'projects', properties: { project_id: { bsonType: 'int' } } } },
      { collection: 'members', schema: { title: 'member', properties: { memberId: { bsonType: 'string' } } } },
    ]);
    expect(typeSdl(app, 'Assignment')).toBe('type Assignment {\n  _id: ObjectId\n  categoryId: Category\n  memberId: Member!\n  project_id: Project\n  type: String!\n}');
    expect(typeSdl(app, 'AssignmentProject_idRelationInput')).toBe('input AssignmentProject_idRelationInput {\n  create: ProjectInsertInput\n  link: Int\n}');
    expect(typeSdl(app, 'AssignmentSortByInput')).toContain('MEMBERID_ASC');
    expect(typeSdl(app, 'AssignmentInsertInput')).toContain('memberId: AssignmentMemberIdRelationInput!');
    expect(typeSdl(app, 'AssignmentQueryInput')).toContain('categoryId: CategoryQueryInput');
  });

  it('gives Booleans only eq, ne and exists, and leaves them out of sorting (vector 35)', () => {
    const app = appWith([{ collection: 'reminders', schema: { title: 'Reminder', properties: { archived: { bsonType: 'bool' }, dueDate: { bsonType: 'date' } } } }]);
    const query = typeSdl(app, 'ReminderQueryInput');
    expect(query).toContain('archived_ne: Boolean');
    expect(query).not.toContain('archived_in');
    expect(query).not.toContain('archived_gt');
    expect(typeSdl(app, 'ReminderSortByInput')).not.toContain('ARCHIVED');
    expect(typeSdl(app, 'ReminderSortByInput')).toContain('DUEDATE_ASC');
  });

  it('types a Realm float field as Float, with its _inc, as a double', () => {
    const app = appWith([{ collection: 'quotes', schema: { title: 'Quote', properties: { _id: { bsonType: 'objectId' }, price: { bsonType: 'float' }, total: { bsonType: 'double' } } } }]);
    expect(typeSdl(app, 'Quote')).toContain('price: Float');
    expect(typeSdl(app, 'QuoteUpdateInput')).toContain('price_inc: Float');
    expect(typeSdl(app, 'QuoteQueryInput')).toContain('price_gt: Float');
  });

  it('does not follow a relationship from _id (App Services wrote them against its docs): _id stays the id, with a warning', () => {
    const app = appWith([
      { collection: 'movies', schema: { title: 'Movie', properties: { _id: { bsonType: 'objectId' }, title: { bsonType: 'string' } } }, relationships: { _id: { ref: '#/relationship/mongodb-atlas/db/reviews', source_key: '_id', foreign_key: 'movie_id', is_list: true } } },
      { collection: 'reviews', schema: { title: 'Review', properties: { _id: { bsonType: 'objectId' }, movie_id: { bsonType: 'objectId' } } } },
    ]);
    expect(typeSdl(app, 'Movie')).toContain('_id: ObjectId');
    expect(buildGraphqlModel(app).warnings.join('\n')).toContain("relationship '_id' is not followed");
  });

  it('leaves out an embedded object with no field GraphQL can type, so the rest of the schema stands', async () => {
    const app = appWith([{ collection: 'items', schema: { title: 'Item', properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' }, preferences: { bsonType: 'object', properties: {} }, nested: { bsonType: 'object', properties: { empty: { bsonType: 'object', properties: {} } } } } } }]);
    const schema = buildGraphqlSchema(buildGraphqlModel(app));
    const result = await graphql({ schema, source: '{ __type(name: "Item") { fields { name } } }' });
    expect(result.errors).toBeUndefined();
    expect((result.data as { __type: { fields: { name: string }[] } }).__type.fields.map((field) => field.name).sort()).toEqual(['_id', 'name']);
    expect(buildGraphqlModel(app).warnings.join('\n')).toContain("embedded object 'ItemPreference' has no field GraphQL can type");
  });

  it('types a to-many relationship on a sanitised name (vector 36)', () => {
    const app = appWith([
      {
        collection: 'tasks',
        schema: { title: 'task', properties: { 'Assigned reviewer of QA step': { bsonType: 'array', items: { bsonType: 'string' } } } },
        relationships: { 'Assigned reviewer of QA step': { ref: '#/relationship/mongodb-atlas/db/members', source_key: 'Assigned reviewer of QA step', foreign_key: 'memberId', is_list: true } },
      },
      { collection: 'members', schema: { title: 'member', properties: { memberId: { bsonType: 'string' } } } },
    ]);
    expect(typeSdl(app, 'Task')).toContain('AssignedReviewerOfQAStep: [Member]');
    expect(typeSdl(app, 'TaskAssignedReviewerOfQAStepRelationInput')).toBe('input TaskAssignedReviewerOfQAStepRelationInput {\n  create: [MemberInsertInput]\n  link: [String]\n}');
    expect(typeSdl(app, 'TaskQueryInput')).toContain('AssignedReviewerOfQAStep_nin: [MemberQueryInput]');
  });

  it('skips a collection without schema and warns on duplicate titles', () => {
    const model = buildGraphqlModel(
      appWith([
        { collection: 'a', schema: { title: 'Thing', properties: { x: { bsonType: 'int' } } } },
        { collection: 'b', schema: { title: 'things', properties: { y: { bsonType: 'int' } } } },
      ]),
    );
    expect(model.collections.map((c) => c.collection)).toEqual(['a']);
    expect(model.warnings[0]).toMatch(/duplicate schema title 'Thing'/);
  });

  it('lets a custom resolver override a schema field and refuses one naming an unknown type', () => {
    const app = appWith([{ collection: 'notes', schema: { title: 'note', properties: { text: { bsonType: 'string' } } } }]);
    app.graphql = { customResolvers: [{ on_type: 'Note', field_name: 'text', function_name: 'f', payload_type: 'int', payload_type_format: 'scalar' }] };
    expect(typeSdl(app, 'Note')).toBe('type Note {\n  text: Int\n}');
    app.graphql.customResolvers = [{ on_type: 'Query', field_name: 'x', function_name: 'f', payload_type: 'Nope', payload_type_format: 'generated' }];
    expect(() => buildGraphqlSchema(buildGraphqlModel(app))).toThrow(/unknown generated type 'Nope'/);
  });

  // As App Services generated them (issue 14, item 17): the whole path, each property's words capitalised.
  it('names the nested object types of a custom payload after the whole path to them', () => {
    const app = appWith([{ collection: 'notes', schema: { title: 'note', properties: { text: { bsonType: 'string' } } } }]);
    const payload = {
      title: 'IncidentReportPayload',
      bsonType: 'object',
      properties: {
        summary: { bsonType: 'string' },
        findings: {
          bsonType: 'array',
          items: {
            bsonType: 'object',
            properties: {
              'alleged deployer of AI system': { bsonType: 'object', properties: { 'legal name': { bsonType: 'string' }, address: { bsonType: 'object', properties: { city: { bsonType: 'string' } } } } },
            },
          },
        },
      },
    };
    app.graphql = { customResolvers: [{ on_type: 'Query', field_name: 'incidentReport', function_name: 'f', payload_type: payload, payload_type_format: 'custom' }] };
    const schema = lexicographicSortSchema(buildGraphqlSchema(buildGraphqlModel(app)));
    const names = Object.keys(schema.getTypeMap()).filter((name) => name.startsWith('IncidentReport'));
    expect(names.sort()).toEqual([
      'IncidentReportPayload',
      'IncidentReportPayloadFinding',
      'IncidentReportPayloadFindingAllegedDeployerOfAISystem',
      'IncidentReportPayloadFindingAllegedDeployerOfAISystemAddress',
    ]);
    expect(printType(schema.getType('IncidentReportPayloadFinding') as GraphQLNamedType)).toBe(
      'type IncidentReportPayloadFinding {\n  AllegedDeployerOfAISystem: IncidentReportPayloadFindingAllegedDeployerOfAISystem\n}',
    );
    expect(printType(schema.getType('IncidentReportPayloadFindingAllegedDeployerOfAISystem') as GraphQLNamedType)).toContain('LegalName: String');
  });

  it('reads a renamed payload property from the key the function returned', async () => {
    const app = appWith([{ collection: 'notes', schema: { title: 'note', properties: { text: { bsonType: 'string' } } } }]);
    const payload = { title: 'CasePayload', bsonType: 'object', properties: { 'alleged deployer of AI system': { bsonType: 'object', properties: { 'legal name': { bsonType: 'string' } } } } };
    app.graphql = { customResolvers: [{ on_type: 'Query', field_name: 'case', function_name: 'f', payload_type: payload, payload_type_format: 'custom' }] };
    const schema = buildGraphqlSchema(buildGraphqlModel(app), {
      root: () => null,
      relationship: () => null,
      custom: () => ({ 'alleged deployer of AI system': { 'legal name': 'Acme' } }),
    });
    const result = await graphql({ schema, source: '{ case { AllegedDeployerOfAISystem { LegalName } } }' });
    expect(result).toEqual({ data: { case: { AllegedDeployerOfAISystem: { LegalName: 'Acme' } } } });
  });

  it('names an untitled custom payload after its resolver and adds no unused Decimal scalar', () => {
    const app = appWith([{ collection: 'notes', schema: { title: 'note', properties: { text: { bsonType: 'string' } } } }]);
    app.graphql = {
      customResolvers: [
        { on_type: 'Query', field_name: 'stats', function_name: 'f', payload_type: { bsonType: 'object', properties: { n: { bsonType: 'int' } } }, payload_type_format: 'custom' },
        { on_type: 'Query', field_name: 'totals', function_name: 'f', payload_type: { bsonType: 'object', properties: { sum: { bsonType: 'double' } } }, payload_type_format: 'custom' },
      ],
    };
    const schema = buildGraphqlSchema(buildGraphqlModel(app));
    expect(schema.getType('StatsPayload')).toBeDefined();
    expect(schema.getType('TotalsPayload')).toBeDefined();
    expect(schema.getType('Decimal')).toBeUndefined();
    const withDecimal = appWith([{ collection: 'prices', schema: { title: 'price', properties: { exact: { bsonType: 'decimal' } } } }]);
    expect(buildGraphqlSchema(buildGraphqlModel(withDecimal)).getType('Decimal')).toBeDefined();
  });
});
