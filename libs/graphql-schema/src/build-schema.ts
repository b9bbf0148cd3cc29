/**
 * Builds the GraphQL schema App Services generated for an app (reference PART A.3-A.8) from the model.
 * Resolvers come from the caller through `GraphqlResolvers`, so this module stays free of any store: the
 * admin API prints the same schema without them, the gateway executes it with them. Every generated field
 * carries `extensions.tessera` saying what it is (root operation, relationship, stored key).
 */
import type { JsonSchema } from '@tessera/app-config';
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLFieldResolver,
  type GraphQLInputFieldConfigMap,
  GraphQLInputObjectType,
  type GraphQLInputType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLSchema,
  GraphQLString,
  type GraphQLScalarType,
  type GraphQLNamedType,
  type GraphQLResolveInfo,
  isInputType,
  isOutputType,
} from 'graphql/index.js';
import { bsonTypeOf, type CollectionModel, type CustomResolverModel, fieldNameOf, type FieldModel, type GraphqlModel, type ObjectModel, type ScalarName, scalarOf, typeNameOf } from './model';
import { singularize, upperFirst } from './inflection';
import { DateTimeScalar, DecimalScalar, LongScalar, ObjectIdScalar } from './scalars';
import { Double, Int32, Long } from 'bson';

export type RootOperation = 'findOne' | 'findMany' | 'insertOne' | 'insertMany' | 'updateOne' | 'updateMany' | 'upsertOne' | 'replaceOne' | 'deleteOne' | 'deleteMany';

export interface RootFieldPlan {
  operation: RootOperation;
  collection: CollectionModel;
}

/** What `extensions.tessera` holds on a generated field. */
export type FieldExtension =
  | { kind: 'root'; plan: RootFieldPlan }
  | { kind: 'relationship'; field: FieldModel; owner: string }
  | { kind: 'custom'; resolver: CustomResolverModel };

export interface GraphqlResolvers<Context> {
  root(plan: RootFieldPlan, args: Record<string, unknown>, context: Context, info: GraphQLResolveInfo): unknown;
  relationship(field: FieldModel, parent: Record<string, unknown>, context: Context, info: GraphQLResolveInfo): unknown;
  custom(resolver: CustomResolverModel, input: unknown, source: Record<string, unknown> | undefined, context: Context, info: GraphQLResolveInfo): unknown;
}

export const SORT_ASC = 1;
export const SORT_DESC = -1;

/** The internal value of a `<T>SortByInput` member. */
export interface SortValue {
  key: string;
  direction: 1 | -1;
}

const scalars: Record<ScalarName, GraphQLScalarType> = {
  ObjectId: ObjectIdScalar,
  String: GraphQLString,
  Int: GraphQLInt,
  Long: LongScalar,
  Float: GraphQLFloat,
  Decimal: DecimalScalar,
  DateTime: DateTimeScalar,
  Boolean: GraphQLBoolean,
};

const sortable = new Set<ScalarName>(['String', 'Int', 'Long', 'Float', 'Decimal', 'ObjectId', 'DateTime']);

type AnyType = GraphQLInputType | GraphQLOutputType;

function listOf<T extends AnyType>(type: T, depth: number): T {
  let wrapped: AnyType = type;
  for (let i = 0; i < depth; i += 1) wrapped = new GraphQLList<AnyType>(wrapped) as unknown as AnyType;
  return wrapped as T;
}

/** A stored value with its Int32, Double and Long wrappers (at any list depth) as JS numbers, for Int and Float fields. */
function plainNumbers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainNumbers);
  if (value instanceof Long) return value.toNumber();
  if (value instanceof Double || value instanceof Int32) return value.value;
  return value;
}

function nonNullIf<T extends GraphQLInputType | GraphQLOutputType>(type: T, required: boolean): T {
  return (required ? new GraphQLNonNull(type) : type) as T;
}

class SchemaBuilder<Context> {
  private readonly objects = new Map<string, GraphQLObjectType>();
  private readonly queryInputs = new Map<string, GraphQLInputObjectType>();
  private readonly insertInputs = new Map<string, GraphQLInputObjectType>();
  private readonly updateInputs = new Map<string, GraphQLInputObjectType>();
  private readonly relationInputs = new Map<string, GraphQLInputObjectType>();
  private readonly sortInputs = new Map<string, GraphQLEnumType>();
  private readonly customTypes = new Map<string, GraphQLNamedType>();
  private readonly extraFields = new Map<string, CustomResolverModel[]>();
  private readonly byName: Map<string, CollectionModel>;
  private payloads?: { deleteMany: GraphQLObjectType; insertMany: GraphQLObjectType; updateMany: GraphQLObjectType };
  private defaultPayload?: GraphQLObjectType;

  constructor(
    private readonly model: GraphqlModel,
    private readonly resolvers: GraphqlResolvers<Context> | undefined,
  ) {
    this.byName = new Map(model.collections.map((c) => [c.name, c]));
    for (const resolver of model.customResolvers) {
      if (resolver.onType === 'Query' || resolver.onType === 'Mutation') continue;
      this.extraFields.set(resolver.onType, [...(this.extraFields.get(resolver.onType) ?? []), resolver]);
    }
  }

  build(): GraphQLSchema {
    for (const collection of this.model.collections) this.objectType(collection);
    const query: GraphQLFieldConfigMap<unknown, Context> = {};
    const mutation: GraphQLFieldConfigMap<unknown, Context> = {};
    for (const collection of this.model.collections) {
      this.rootFields(collection, query, mutation);
    }
    for (const resolver of this.model.customResolvers) {
      if (resolver.onType === 'Query') query[resolver.fieldName] = this.customField(resolver);
      if (resolver.onType === 'Mutation') mutation[resolver.fieldName] = this.customField(resolver);
    }
    if (Object.keys(query).length === 0) {
      // GraphQL requires a Query type with a field; an app without exposed collections gets a harmless one.
      query['_empty'] = { type: GraphQLBoolean, resolve: () => null };
    }
    return new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: query }),
      ...(Object.keys(mutation).length > 0 ? { mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutation }) } : {}),
      // Decimal is not listed: App Services' schemas carry it only where a field uses it (then the
      // field brings it in); ObjectId, DateTime and Long are always there.
      types: [ObjectIdScalar, DateTimeScalar, LongScalar, ...this.payloadTypes()],
    });
  }

  private payloadTypes(): GraphQLObjectType[] {
    const types: GraphQLObjectType[] = [];
    if (this.payloads) types.push(this.payloads.deleteMany, this.payloads.insertMany, this.payloads.updateMany);
    if (this.defaultPayload) types.push(this.defaultPayload);
    return types;
  }

  private manyPayloads(): { deleteMany: GraphQLObjectType; insertMany: GraphQLObjectType; updateMany: GraphQLObjectType } {
    this.payloads ??= {
      deleteMany: new GraphQLObjectType({ name: 'DeleteManyPayload', fields: { deletedCount: { type: new GraphQLNonNull(GraphQLInt) } } }),
      insertMany: new GraphQLObjectType({ name: 'InsertManyPayload', fields: { insertedIds: { type: new GraphQLNonNull(new GraphQLList(ObjectIdScalar)) } } }),
      updateMany: new GraphQLObjectType({ name: 'UpdateManyPayload', fields: { matchedCount: { type: new GraphQLNonNull(GraphQLInt) }, modifiedCount: { type: new GraphQLNonNull(GraphQLInt) } } }),
    };
    return this.payloads;
  }

  private rootFields(c: CollectionModel, query: GraphQLFieldConfigMap<unknown, Context>, mutation: GraphQLFieldConfigMap<unknown, Context>): void {
    const T = c.name;
    const P = upperFirst(c.plural);
    const type = this.objectType(c);
    const queryInput = this.queryInput(c);
    const insertInput = this.insertInput(c);
    const updateInput = this.updateInput(c);
    const payloads = this.manyPayloads();
    const root = (operation: RootOperation, config: Omit<GraphQLFieldConfig<unknown, Context>, 'resolve' | 'extensions'>): GraphQLFieldConfig<unknown, Context> => {
      const plan: RootFieldPlan = { operation, collection: c };
      const resolvers = this.resolvers;
      return {
        ...config,
        extensions: { tessera: { kind: 'root', plan } satisfies FieldExtension },
        ...(resolvers ? { resolve: ((_source, args: Record<string, unknown>, context, info) => resolvers.root(plan, args, context, info)) satisfies GraphQLFieldResolver<unknown, Context> } : {}),
      };
    };
    query[c.singular] = root('findOne', { type, args: { query: { type: queryInput } } });
    query[c.plural] = root('findMany', {
      type: new GraphQLNonNull(new GraphQLList(type)),
      args: { query: { type: queryInput }, limit: { type: GraphQLInt, defaultValue: 100 }, sortBy: { type: this.sortInput(c) } },
    });
    mutation[`deleteMany${P}`] = root('deleteMany', { type: payloads.deleteMany, args: { query: { type: queryInput } } });
    mutation[`deleteOne${T}`] = root('deleteOne', { type, args: { query: { type: new GraphQLNonNull(queryInput) } } });
    mutation[`insertMany${P}`] = root('insertMany', { type: payloads.insertMany, args: { data: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(insertInput))) } } });
    mutation[`insertOne${T}`] = root('insertOne', { type, args: { data: { type: new GraphQLNonNull(insertInput) } } });
    mutation[`replaceOne${T}`] = root('replaceOne', { type, args: { query: { type: queryInput }, data: { type: new GraphQLNonNull(insertInput) } } });
    mutation[`updateMany${P}`] = root('updateMany', { type: payloads.updateMany, args: { query: { type: queryInput }, set: { type: new GraphQLNonNull(updateInput) } } });
    mutation[`updateOne${T}`] = root('updateOne', { type, args: { query: { type: queryInput }, set: { type: new GraphQLNonNull(updateInput) } } });
    mutation[`upsertOne${T}`] = root('upsertOne', { type, args: { query: { type: queryInput }, data: { type: new GraphQLNonNull(insertInput) } } });
  }

  private objectType(object: ObjectModel): GraphQLObjectType {
    const existing = this.objects.get(object.name);
    if (existing) return existing;
    const type = new GraphQLObjectType({
      name: object.name,
      fields: () => {
        const fields: GraphQLFieldConfigMap<Record<string, unknown>, Context> = {};
        for (const field of object.fields) fields[field.name] = this.outputField(object.name, field);
        for (const resolver of this.extraFields.get(object.name) ?? []) fields[resolver.fieldName] = this.customField(resolver);
        return fields;
      },
    });
    this.objects.set(object.name, type);
    return type;
  }

  private outputField(owner: string, field: FieldModel): GraphQLFieldConfig<Record<string, unknown>, Context> {
    const read: GraphQLFieldResolver<Record<string, unknown>, Context> | undefined = field.key === field.name ? undefined : (source) => source[field.key];
    switch (field.kind) {
      case 'scalar': {
        const type = nonNullIf(listOf(scalars[field.scalar ?? 'String'], field.listDepth), field.required);
        // A stored number keeps its BSON type (a Long, or a Double holding an integer): Int and Float read its value.
        if (field.scalar === 'Int' || field.scalar === 'Float') return { type, resolve: (source) => plainNumbers(source[field.key]) };
        return { type, ...(read ? { resolve: read } : {}) };
      }
      case 'object':
        return { type: nonNullIf(listOf(this.objectType(field.object as ObjectModel), field.listDepth), field.required), ...(read ? { resolve: read } : {}) };
      case 'relationship': {
        const relationship = field.relationship as NonNullable<FieldModel['relationship']>;
        const target = this.objectType(this.collection(relationship.target));
        const resolvers = this.resolvers;
        return {
          type: nonNullIf(relationship.isList ? new GraphQLList(target) : target, field.required),
          extensions: { tessera: { kind: 'relationship', field, owner } satisfies FieldExtension },
          ...(resolvers ? { resolve: (source, _args, context, info) => resolvers.relationship(field, source, context, info) } : {}),
        };
      }
    }
  }

  private collection(name: string): CollectionModel {
    const collection = this.byName.get(name);
    if (!collection) throw new Error(`unknown type ${name}`);
    return collection;
  }

  private queryInput(object: ObjectModel): GraphQLInputObjectType {
    const existing = this.queryInputs.get(object.name);
    if (existing) return existing;
    const input: GraphQLInputObjectType = new GraphQLInputObjectType({
      name: `${object.name}QueryInput`,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {
          AND: { type: new GraphQLList(new GraphQLNonNull(input)) },
          OR: { type: new GraphQLList(new GraphQLNonNull(input)) },
        };
        for (const field of object.fields) {
          const f = field.name;
          fields[`${f}_exists`] = { type: GraphQLBoolean };
          if (field.kind === 'relationship') {
            const relationship = field.relationship as NonNullable<FieldModel['relationship']>;
            const foreign = this.queryInput(this.collection(relationship.target));
            if (relationship.isList) {
              for (const suffix of ['', '_in', '_nin']) fields[f + suffix] = { type: new GraphQLList(foreign) };
            } else {
              fields[f] = { type: foreign };
            }
            continue;
          }
          const element: GraphQLInputType = field.kind === 'object' ? this.queryInput(field.object as ObjectModel) : scalars[field.scalar ?? 'String'];
          if (field.listDepth > 0) {
            for (const suffix of ['', '_in', '_nin']) fields[f + suffix] = { type: listOf(element, field.listDepth) };
          } else if (field.kind === 'object') {
            fields[f] = { type: element };
          } else if (field.scalar === 'Boolean') {
            fields[f] = { type: element };
            fields[`${f}_ne`] = { type: element };
          } else {
            for (const suffix of ['', '_ne', '_gt', '_gte', '_lt', '_lte']) fields[f + suffix] = { type: element };
            fields[`${f}_in`] = { type: new GraphQLList(element) };
            fields[`${f}_nin`] = { type: new GraphQLList(element) };
          }
        }
        return fields;
      },
    });
    this.queryInputs.set(object.name, input);
    return input;
  }

  private insertInput(object: ObjectModel): GraphQLInputObjectType {
    const existing = this.insertInputs.get(object.name);
    if (existing) return existing;
    const input = new GraphQLInputObjectType({
      name: `${object.name}InsertInput`,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {};
        for (const field of object.fields) fields[field.name] = { type: nonNullIf(this.valueInput(object, field, 'insert'), field.required) };
        return fields;
      },
    });
    this.insertInputs.set(object.name, input);
    return input;
  }

  private updateInput(object: ObjectModel): GraphQLInputObjectType {
    const existing = this.updateInputs.get(object.name);
    if (existing) return existing;
    const input = new GraphQLInputObjectType({
      name: `${object.name}UpdateInput`,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {};
        for (const field of object.fields) {
          fields[field.name] = { type: this.valueInput(object, field, 'update') };
          fields[`${field.name}_unset`] = { type: GraphQLBoolean };
          if (field.kind === 'scalar' && field.listDepth === 0 && field.bsonType === 'int') fields[`${field.name}_inc`] = { type: GraphQLInt };
          if (field.kind === 'scalar' && field.listDepth === 0 && (field.bsonType === 'double' || field.bsonType === 'float')) fields[`${field.name}_inc`] = { type: GraphQLFloat };
        }
        return fields;
      },
    });
    this.updateInputs.set(object.name, input);
    return input;
  }

  /** The input type of a field's value in an Insert or Update input. */
  private valueInput(owner: ObjectModel, field: FieldModel, mode: 'insert' | 'update'): GraphQLInputType {
    switch (field.kind) {
      case 'scalar':
        return listOf(scalars[field.scalar ?? 'String'], field.listDepth);
      case 'object': {
        const object = field.object as ObjectModel;
        return listOf(mode === 'insert' ? this.insertInput(object) : this.updateInput(object), field.listDepth);
      }
      case 'relationship':
        return this.relationInput(owner, field);
    }
  }

  private relationInput(owner: ObjectModel, field: FieldModel): GraphQLInputObjectType {
    const name = `${owner.name}${upperFirst(field.name)}RelationInput`;
    const existing = this.relationInputs.get(name);
    if (existing) return existing;
    const relationship = field.relationship as NonNullable<FieldModel['relationship']>;
    const input = new GraphQLInputObjectType({
      name,
      fields: () => {
        const create = this.insertInput(this.collection(relationship.target));
        const link = scalars[relationship.foreignScalar];
        return relationship.isList ? { create: { type: new GraphQLList(create) }, link: { type: new GraphQLList(link) } } : { create: { type: create }, link: { type: link } };
      },
    });
    this.relationInputs.set(name, input);
    return input;
  }

  private sortInput(c: CollectionModel): GraphQLEnumType {
    const existing = this.sortInputs.get(c.name);
    if (existing) return existing;
    const values: Record<string, { value: SortValue }> = {};
    for (const field of c.fields) {
      const eligible = field.listDepth === 0 && ((field.kind === 'scalar' && sortable.has(field.scalar ?? 'String')) || (field.kind === 'relationship' && !field.relationship?.isList));
      if (!eligible) continue;
      values[`${field.name.toUpperCase()}_ASC`] = { value: { key: field.key, direction: SORT_ASC } };
      values[`${field.name.toUpperCase()}_DESC`] = { value: { key: field.key, direction: SORT_DESC } };
    }
    const type = new GraphQLEnumType({ name: `${c.name}SortByInput`, values });
    this.sortInputs.set(c.name, type);
    return type;
  }

  private customField(resolver: CustomResolverModel): GraphQLFieldConfig<unknown, Context> {
    const type = resolver.payload ? this.resolverType(resolver.payload, 'payload', resolver) : this.defaultPayloadType();
    const input = resolver.input ? this.resolverType(resolver.input, 'input', resolver) : undefined;
    if (!isOutputType(type)) throw new Error(`custom resolver ${resolver.onType}.${resolver.fieldName}: payload type ${String(type)} is not an output type`);
    if (input !== undefined && !isInputType(input)) throw new Error(`custom resolver ${resolver.onType}.${resolver.fieldName}: input type ${String(input)} is not an input type`);
    const resolvers = this.resolvers;
    const onRoot = resolver.onType === 'Query' || resolver.onType === 'Mutation';
    return {
      type,
      ...(input ? { args: { input: { type: input } } } : {}),
      extensions: { tessera: { kind: 'custom', resolver } satisfies FieldExtension },
      ...(resolvers
        ? {
            resolve: async (source: unknown, args: Record<string, unknown>, context: Context, info: GraphQLResolveInfo) => {
              const result = await resolvers.custom(resolver, args['input'], onRoot ? undefined : (source as Record<string, unknown>), context, info);
              return resolver.payload ? result : { status: 'complete' };
            },
          }
        : {}),
    };
  }

  private defaultPayloadType(): GraphQLObjectType {
    this.defaultPayload ??= new GraphQLObjectType({ name: 'DefaultPayload', fields: { status: { type: new GraphQLNonNull(GraphQLString) } } });
    return this.defaultPayload;
  }

  private resolverType(part: NonNullable<CustomResolverModel['input']>, role: 'input' | 'payload', resolver: CustomResolverModel): AnyType {
    const { format, type } = part;
    switch (format) {
      case 'scalar':
      case 'scalar-list':
      case '': {
        const scalar = typeof type === 'string' ? (scalars[type as ScalarName] ?? scalars[scalarOf(type) ?? ('' as ScalarName)]) : undefined;
        if (!scalar) throw new Error(`unknown scalar type '${JSON.stringify(type)}' in a custom resolver`);
        return format === 'scalar-list' ? listOf(scalar, 1) : scalar;
      }
      case 'generated':
      case 'generated-list': {
        const named = this.generatedNamed(typeof type === 'string' ? type : JSON.stringify(type));
        return (format === 'generated-list' ? listOf(named as AnyType, 1) : named) as AnyType;
      }
      case 'custom': {
        if (typeof type !== 'object') throw new Error('a custom input or payload type needs a JSON schema');
        return this.customSchemaType(type, role, resolver);
      }
    }
  }

  private generatedNamed(name: string): GraphQLNamedType {
    const suffixes: Array<[string, (o: ObjectModel) => GraphQLNamedType]> = [
      ['QueryInput', (o) => this.queryInput(o)],
      ['InsertInput', (o) => this.insertInput(o)],
      ['UpdateInput', (o) => this.updateInput(o)],
    ];
    for (const [suffix, make] of suffixes) {
      if (name.endsWith(suffix) && this.byName.has(name.slice(0, -suffix.length))) return make(this.collection(name.slice(0, -suffix.length)));
    }
    if (this.byName.has(name)) return this.objectType(this.collection(name));
    throw new Error(`custom resolver names unknown generated type '${name}'`);
  }

  private customSchemaType(schema: JsonSchema, role: 'input' | 'payload', resolver: CustomResolverModel): AnyType {
    // An untitled custom type is named after its resolver (`<FieldName>Payload`, `<FieldName>Input`),
    // so two resolvers' untitled types never share one name.
    const title = typeNameOf(schema.title ?? `${upperFirst(resolver.fieldName)}${role === 'input' ? 'Input' : 'Payload'}`);
    if (bsonTypeOf(schema) === 'array' && schema.items) {
      const itemName = `${title}Item`;
      return listOf(this.customElement(schema.items, itemName, title, role), 1);
    }
    return this.customElement(schema, title, title, role);
  }

  /**
   * A type of a custom schema: `name` for itself; an object type it nests is named after the whole path
   * to it, `prefix` + each property's name (`StepsPayloadAuthorAddress` for `author.address`), array
   * levels adding nothing. Property names become GraphQL names as document fields do (each word
   * capitalised: `alleged deployer of AI system` -> `AllegedDeployerOfAISystem`).
   */
  private customElement(schema: JsonSchema, name: string, prefix: string, role: 'input' | 'payload'): AnyType {
    let element = schema;
    let depth = 0;
    while (bsonTypeOf(element) === 'array' && element.items) {
      element = element.items;
      depth += 1;
    }
    const scalar = scalarOf(bsonTypeOf(element));
    if (scalar) return listOf(scalars[scalar], depth);
    if (element.properties === undefined) return listOf(GraphQLString, depth);
    const existing = this.customTypes.get(name);
    if (existing) return listOf(existing as GraphQLInputObjectType | GraphQLObjectType, depth);
    const required = new Set(element.required ?? []);
    const properties = element.properties;
    const fieldsOf = (): Record<string, { type: GraphQLInputType & GraphQLOutputType; resolve?: (source: unknown) => unknown }> => {
      const fields: Record<string, { type: GraphQLInputType & GraphQLOutputType; resolve?: (source: unknown) => unknown }> = {};
      for (const key of Object.keys(properties).sort()) {
        const fieldName = fieldNameOf(key);
        if (fieldName === undefined || fields[fieldName] !== undefined) continue;
        const nestedName = prefix + upperFirst(singularize(fieldName));
        const type = this.customElement(properties[key], nestedName, nestedName, role) as GraphQLInputType & GraphQLOutputType;
        // A payload property whose name had to change is read from the key the function returned.
        fields[fieldName] = { type: nonNullIf(type, required.has(key)), ...(role === 'payload' && fieldName !== key ? { resolve: (source: unknown) => (source as Record<string, unknown> | null)?.[key] } : {}) };
      }
      return fields;
    };
    const type = role === 'input' ? new GraphQLInputObjectType({ name, fields: fieldsOf }) : new GraphQLObjectType({ name, fields: fieldsOf });
    this.customTypes.set(name, type);
    return listOf(type, depth);
  }
}

/** The executable (with resolvers) or printable (without) schema of a model. */
export function buildGraphqlSchema<Context>(model: GraphqlModel, resolvers?: GraphqlResolvers<Context>): GraphQLSchema {
  return new SchemaBuilder<Context>(model, resolvers).build();
}

/** What a generated field is, or undefined for fields the generator did not make. */
export function fieldExtension(extensions: Readonly<Record<string, unknown>> | null | undefined): FieldExtension | undefined {
  return extensions?.['tessera'] as FieldExtension | undefined;
}
