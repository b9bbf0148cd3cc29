/**
 * Realm SDK object models generated from an app's collection schemas (pure), as App Services answers
 * `GET .../sync/client_schemas/<language>` and realm-cli's `schema datamodels` prints them: one model per
 * collection schema with a `title` (the object type's name) and one per embedded object type.
 */
import { type AppConfig, type CollectionRule, type JsonSchema, isDataSourceType, isFederatedType } from './model';

export const DATA_MODEL_LANGUAGES = ['C_SHARP', 'JAVA', 'JAVA_SCRIPT', 'KOTLIN', 'OBJECTIVE_C', 'SWIFT', 'TYPE_SCRIPT', 'DART'] as const;
export type DataModelLanguage = (typeof DATA_MODEL_LANGUAGES)[number];

export interface DataModelAlert {
  error: string;
  error_code: string;
}

/** One generated model, in the wire shape realm-cli decodes. */
export interface DataModel {
  service_id: string;
  rule_id: string;
  model_name: string;
  collection_display_name: string;
  /** Each ends with a newline: realm-cli joins them with nothing in between. */
  import_statements: string[];
  schema: string;
  warnings: DataModelAlert[];
  error: DataModelAlert;
}

/** Realm's property types. */
export type RealmScalar = 'objectId' | 'string' | 'int' | 'bool' | 'double' | 'float' | 'decimal' | 'date' | 'data' | 'uuid' | 'mixed';

export interface ModelProperty {
  name: string;
  collection: 'single' | 'list' | 'set' | 'dictionary';
  /** A scalar type, or the name of the object type for links and embedded objects. */
  type: RealmScalar | 'object';
  objectType?: string;
  /** A single value: not in `required` (links and mixed always are); a collection: its elements admit null. */
  optional: boolean;
  primaryKey: boolean;
}

export interface ObjectModel {
  name: string;
  embedded: boolean;
  primaryKey?: string;
  properties: ModelProperty[];
}

const scalars: Record<string, RealmScalar> = {
  objectId: 'objectId',
  string: 'string',
  int: 'int',
  long: 'int',
  bool: 'bool',
  double: 'double',
  float: 'float',
  decimal: 'decimal',
  date: 'date',
  binData: 'data',
  uuid: 'uuid',
  mixed: 'mixed',
};

function bsonTypeOf(schema: JsonSchema | undefined): string | undefined {
  const t = schema?.bsonType;
  return Array.isArray(t) ? t.find((x) => x !== 'null') : t;
}

const admitsNull = (schema: JsonSchema): boolean => Array.isArray(schema.bsonType) && schema.bsonType.includes('null');

interface ReadModel {
  model: ObjectModel;
  rule: CollectionRule;
  warnings: DataModelAlert[];
  error?: DataModelAlert;
}

/** Reads the object models of one data source's collection rules: top-level types first, each followed by its embedded types. */
export function readObjectModels(rules: readonly CollectionRule[], service: string): ReadModel[] {
  const titled = rules.filter((rule) => typeof rule.schema?.title === 'string' && rule.schema.title !== '');
  const byCollection = new Map(titled.map((rule) => [`${rule.database}/${rule.collection}`, rule.schema!.title!]));
  const seen = new Set<string>();
  const out: ReadModel[] = [];
  for (const rule of titled) {
    const schema = rule.schema!;
    const name = schema.title!;
    const warnings: DataModelAlert[] = [];
    if (bsonTypeOf(schema) !== 'object') {
      out.push({ model: { name, embedded: false, properties: [] }, rule, warnings, error: { error: `the schema of ${rule.database}.${rule.collection} must have bsonType "object"`, error_code: 'InvalidSchema' } });
      continue;
    }
    seen.add(name);
    const embedded: ObjectModel[] = [];
    const linkTarget = (path: string): string | undefined => {
      const ref = rule.relationships?.[path]?.ref;
      const parts = typeof ref === 'string' ? ref.split('/') : [];
      if (parts.length < 5 || (parts[2] !== service && parts[2] !== 'mongodb-atlas')) return undefined;
      return byCollection.get(`${parts[3]}/${parts[4]}`);
    };
    const read = (modelName: string, object: JsonSchema, isEmbedded: boolean, prefix: string): ObjectModel => {
      const model: ObjectModel = { name: modelName, embedded: isEmbedded, properties: [] };
      const required = new Set(object.required ?? []);
      for (const [field, property] of Object.entries(object.properties ?? {})) {
        const path = `${prefix}${field}`;
        const type = bsonTypeOf(property);
        let collection: ModelProperty['collection'] = 'single';
        let element = property;
        if (type === 'array') {
          collection = property['uniqueItems'] === true ? 'set' : 'list';
          element = property.items ?? {};
        } else if (type === 'object' && !property.properties && typeof property['additionalProperties'] === 'object' && property['additionalProperties'] !== null) {
          collection = 'dictionary';
          element = property['additionalProperties'] as JsonSchema;
        }
        const primaryKey = !isEmbedded && field === '_id';
        const relationship = rule.relationships?.[path];
        const linked = linkTarget(path);
        if (relationship && !linked) warnings.push({ error: `relationship of ${modelName}.${field} names no collection with a schema title: ${relationship.ref}`, error_code: 'UnresolvedRelationship' });
        if (linked) {
          model.properties.push({ name: field, collection, type: 'object', objectType: linked, optional: collection === 'single' || collection === 'dictionary', primaryKey: false });
          continue;
        }
        const elementType = bsonTypeOf(element);
        if (elementType === 'object') {
          const embeddedName = element.title ?? `${modelName}_${field}`;
          if (!seen.has(embeddedName)) {
            seen.add(embeddedName);
            embedded.push(read(embeddedName, element, true, collection === 'single' ? `${path}.` : `${path}.[].`));
          }
          model.properties.push({ name: field, collection, type: 'object', objectType: embeddedName, optional: collection === 'single' || collection === 'dictionary', primaryKey: false });
          continue;
        }
        const scalar = elementType === undefined ? undefined : scalars[elementType];
        if (!scalar) {
          warnings.push({ error: `${modelName}.${field} has a type Realm cannot sync (${elementType ?? 'no bsonType'}): it was left out`, error_code: 'UnsupportedType' });
          continue;
        }
        const optional = scalar === 'mixed' || (collection === 'single' ? !required.has(field) && !primaryKey : admitsNull(element));
        model.properties.push({ name: field, collection, type: scalar, optional, primaryKey });
        if (primaryKey) model.primaryKey = '_id';
      }
      return model;
    };
    const top = read(name, schema, false, '');
    if (!top.primaryKey) warnings.push({ error: `${name} has no _id property: Realm needs it as the primary key`, error_code: 'MissingPrimaryKey' });
    out.push({ model: top, rule, warnings });
    for (const model of embedded) out.push({ model, rule, warnings: [] });
  }
  return out;
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const pascal = (name: string): string => name.replace(/(^|[_\s-]+)([a-zA-Z0-9])/g, (_, __, c: string) => c.toUpperCase());
const imports = (...lines: string[]): string[] => [...new Set(lines)].map((line) => `${line}\n`);

// ---- JavaScript and TypeScript (realm-js class-based models) ----

function jsType(property: ModelProperty): string {
  // realm-js names Decimal128 `decimal128`; the other scalars as the model does.
  const base = property.type === 'object' ? property.objectType! : property.type === 'decimal' ? 'decimal128' : property.type;
  const nullable = property.optional && property.type !== 'mixed' && property.type !== 'object' ? '?' : '';
  if (property.collection === 'list') return `${base}${nullable}[]`;
  if (property.collection === 'set') return `${base}${nullable}<>`;
  // A dictionary's object values are always nullable (a deleted link leaves null), as realm-js requires.
  if (property.collection === 'dictionary') return `${base}${property.type === 'object' ? '?' : nullable}{}`;
  return `${base}${property.type === 'object' ? '?' : nullable}`;
}

const jsKey = (name: string): string => (identifier.test(name) ? name : JSON.stringify(name));

function jsSchema(model: ObjectModel, typed: boolean): string {
  const lines = [`  static schema${typed ? ': Realm.ObjectSchema' : ''} = {`, `    name: '${model.name}',`];
  if (model.embedded) lines.push('    embedded: true,');
  if (model.primaryKey) lines.push(`    primaryKey: '${model.primaryKey}',`);
  lines.push('    properties: {', ...model.properties.map((p) => `      ${jsKey(p.name)}: '${jsType(p)}',`), '    },', '  };');
  return lines.join('\n');
}

const tsScalars: Record<RealmScalar, string> = {
  objectId: 'Realm.BSON.ObjectId',
  string: 'string',
  int: 'number',
  bool: 'boolean',
  double: 'number',
  float: 'number',
  decimal: 'Realm.BSON.Decimal128',
  date: 'Date',
  data: 'ArrayBuffer',
  uuid: 'Realm.BSON.UUID',
  mixed: 'Realm.Mixed',
};

function tsField(p: ModelProperty): string {
  const base = p.type === 'object' ? p.objectType! : tsScalars[p.type];
  const element = p.optional && p.collection !== 'single' && p.type !== 'mixed' && p.type !== 'object' ? `${base} | null` : base;
  const type = { single: base, list: `Realm.List<${element}>`, set: `Realm.Set<${element}>`, dictionary: `Realm.Dictionary<${element}>` }[p.collection];
  return `  ${jsKey(p.name)}${p.collection === 'single' && p.optional ? '?' : '!'}: ${type};`;
}

function javascript(model: ObjectModel): string {
  return `export class ${model.name} extends Realm.Object {\n${jsSchema(model, false)}\n}\n`;
}

function typescript(model: ObjectModel): string {
  return `export class ${model.name} extends Realm.Object<${model.name}> {\n${model.properties.map(tsField).join('\n')}\n\n${jsSchema(model, true)}\n}\n`;
}

// ---- Kotlin (Realm Kotlin SDK) ----

const kotlinScalars: Record<RealmScalar, [type: string, initial: string, imports: string[]]> = {
  objectId: ['ObjectId', 'ObjectId()', ['import org.mongodb.kbson.ObjectId']],
  string: ['String', '""', []],
  int: ['Long', '0', []],
  bool: ['Boolean', 'false', []],
  double: ['Double', '0.0', []],
  float: ['Float', '0.0f', []],
  decimal: ['Decimal128', 'Decimal128("0")', ['import org.mongodb.kbson.Decimal128']],
  date: ['RealmInstant', 'RealmInstant.from(0, 0)', ['import io.realm.kotlin.types.RealmInstant']],
  data: ['ByteArray', 'byteArrayOf()', []],
  uuid: ['RealmUUID', 'RealmUUID.random()', ['import io.realm.kotlin.types.RealmUUID']],
  mixed: ['RealmAny', 'null', ['import io.realm.kotlin.types.RealmAny']],
};

function kotlin(model: ObjectModel): { code: string; imports: string[] } {
  const needed = [`import io.realm.kotlin.types.${model.embedded ? 'EmbeddedRealmObject' : 'RealmObject'}`];
  const lines: string[] = [];
  for (const p of model.properties) {
    const [base, initial, extra] = p.type === 'object' ? [p.objectType!, 'null', []] : kotlinScalars[p.type];
    needed.push(...extra);
    const elementNullable = p.optional && p.type !== 'object' && p.collection !== 'single' ? '?' : '';
    const element = `${base}${p.type === 'mixed' ? '?' : elementNullable}`;
    if (p.primaryKey) {
      needed.push('import io.realm.kotlin.types.annotations.PrimaryKey');
      lines.push('    @PrimaryKey');
    }
    if (p.collection === 'single') {
      const nullable = p.optional || p.type === 'object';
      lines.push(`    var ${p.name}: ${base}${nullable ? '?' : ''} = ${nullable ? 'null' : initial}`);
      continue;
    }
    const [kind, of] = { list: ['RealmList', 'realmListOf'], set: ['RealmSet', 'realmSetOf'], dictionary: ['RealmDictionary', 'realmDictionaryOf'] }[p.collection];
    needed.push(`import io.realm.kotlin.types.${kind}`, `import io.realm.kotlin.ext.${of}`);
    lines.push(`    var ${p.name}: ${kind}<${p.collection === 'dictionary' && p.type === 'object' ? `${base}?` : element}> = ${of}()`);
  }
  return { code: `class ${model.name} : ${model.embedded ? 'EmbeddedRealmObject' : 'RealmObject'} {\n${lines.join('\n')}\n}\n`, imports: imports(...needed) };
}

// ---- Swift (RealmSwift, @Persisted) ----

const swiftScalars: Record<RealmScalar, string> = {
  objectId: 'ObjectId',
  string: 'String',
  int: 'Int',
  bool: 'Bool',
  double: 'Double',
  float: 'Float',
  decimal: 'Decimal128',
  date: 'Date',
  data: 'Data',
  uuid: 'UUID',
  mixed: 'AnyRealmValue',
};

function swift(model: ObjectModel): string {
  const lines = model.properties.map((p) => {
    const base = p.type === 'object' ? p.objectType! : swiftScalars[p.type];
    const nullable = p.type !== 'mixed' && p.optional ? '?' : '';
    const type = {
      single: `${base}${nullable}`,
      list: `List<${base}${nullable}>`,
      set: `MutableSet<${base}${nullable}>`,
      dictionary: `Map<String, ${base}${nullable}>`,
    }[p.collection];
    return `    @Persisted${p.primaryKey ? '(primaryKey: true)' : ''} var ${p.name}: ${type}`;
  });
  return `class ${model.name}: ${model.embedded ? 'EmbeddedObject' : 'Object'} {\n${lines.join('\n')}\n}\n`;
}

// ---- C# (Realm .NET source generator) ----

const csharpScalars: Record<RealmScalar, [type: string, reference: boolean]> = {
  objectId: ['ObjectId', false],
  string: ['string', true],
  int: ['long', false],
  bool: ['bool', false],
  double: ['double', false],
  float: ['float', false],
  decimal: ['Decimal128', false],
  date: ['DateTimeOffset', false],
  data: ['byte[]', true],
  uuid: ['Guid', false],
  mixed: ['RealmValue', false],
};

function csharp(model: ObjectModel): string {
  const lines: string[] = [];
  for (const p of model.properties) {
    const [base, reference] = p.type === 'object' ? [p.objectType!, true] : csharpScalars[p.type];
    const element = p.type !== 'mixed' && p.optional && !reference ? `${base}?` : base;
    const property = pascal(p.name) || p.name;
    if (lines.length) lines.push('');
    if (p.primaryKey) lines.push('    [PrimaryKey]');
    lines.push(`    [MapTo("${p.name}")]`);
    if (p.collection === 'single') {
      if (reference && !p.optional && p.type !== 'object') lines.push('    [Required]');
      lines.push(`    public ${element} ${property} { get; set; }`);
    } else {
      if (reference && !p.optional && p.type !== 'object') lines.push('    [Required]');
      const type = { list: `IList<${element}>`, set: `ISet<${element}>`, dictionary: `IDictionary<string, ${element}>` }[p.collection];
      lines.push(`    public ${type} ${property} { get; } = null!;`);
    }
  }
  return `public partial class ${model.name} : ${model.embedded ? 'IEmbeddedObject' : 'IRealmObject'}\n{\n${lines.join('\n')}\n}\n`;
}

// ---- Java (realm-java) ----

const javaScalars: Record<RealmScalar, [required: string, optional: string, importLine?: string]> = {
  objectId: ['ObjectId', 'ObjectId', 'import org.bson.types.ObjectId;'],
  string: ['String', 'String'],
  int: ['long', 'Long'],
  bool: ['boolean', 'Boolean'],
  double: ['double', 'Double'],
  float: ['float', 'Float'],
  decimal: ['Decimal128', 'Decimal128', 'import org.bson.types.Decimal128;'],
  date: ['Date', 'Date', 'import java.util.Date;'],
  data: ['byte[]', 'byte[]'],
  uuid: ['UUID', 'UUID', 'import java.util.UUID;'],
  mixed: ['RealmAny', 'RealmAny', 'import io.realm.RealmAny;'],
};

function java(model: ObjectModel): { code: string; imports: string[] } {
  const needed = ['import io.realm.RealmObject;'];
  const fields: string[] = [];
  const accessors: string[] = [];
  if (model.embedded) needed.push('import io.realm.annotations.RealmClass;');
  for (const p of model.properties) {
    let type: string;
    let required = false;
    if (p.type === 'object') {
      type = p.objectType!;
    } else {
      const [req, opt, importLine] = javaScalars[p.type];
      if (importLine) needed.push(importLine);
      const primitive = req !== opt;
      type = p.collection === 'single' ? (p.optional || p.type === 'mixed' ? opt : req) : opt;
      required = p.type !== 'mixed' && !p.optional && (p.collection !== 'single' || !primitive);
    }
    if (p.collection !== 'single') {
      const kind = { list: 'RealmList', set: 'RealmSet', dictionary: 'RealmDictionary' }[p.collection];
      needed.push(`import io.realm.${kind};`);
      type = `${kind}<${type}>`;
    }
    if (p.primaryKey) {
      needed.push('import io.realm.annotations.PrimaryKey;');
      fields.push('    @PrimaryKey');
    } else if (required) {
      needed.push('import io.realm.annotations.Required;');
      fields.push('    @Required');
    }
    fields.push(`    private ${type} ${p.name};`);
    const accessor = pascal(p.name);
    accessors.push(`    public ${type} get${accessor}() { return ${p.name}; }`, `    public void set${accessor}(${type} value) { this.${p.name} = value; }`);
  }
  const annotation = model.embedded ? '@RealmClass(embedded = true)\n' : '';
  return { code: `${annotation}public class ${model.name} extends RealmObject {\n${fields.join('\n')}\n\n${accessors.join('\n')}\n}\n`, imports: imports(...needed) };
}

// ---- Objective-C (Realm Objective-C) ----

const objcScalars: Record<RealmScalar, [required: string, optional: string, protocol: string]> = {
  objectId: ['RLMObjectId *', 'RLMObjectId *', 'RLMObjectId'],
  string: ['NSString *', 'NSString *', 'RLMString'],
  int: ['NSInteger ', 'NSNumber<RLMInt> *', 'RLMInt'],
  bool: ['BOOL ', 'NSNumber<RLMBool> *', 'RLMBool'],
  double: ['double ', 'NSNumber<RLMDouble> *', 'RLMDouble'],
  float: ['float ', 'NSNumber<RLMFloat> *', 'RLMFloat'],
  decimal: ['RLMDecimal128 *', 'RLMDecimal128 *', 'RLMDecimal128'],
  date: ['NSDate *', 'NSDate *', 'RLMDate'],
  data: ['NSData *', 'NSData *', 'RLMData'],
  uuid: ['NSUUID *', 'NSUUID *', 'RLMUUID'],
  mixed: ['id<RLMValue> ', 'id<RLMValue> ', 'RLMValue'],
};

function objectiveC(model: ObjectModel): string {
  const properties: string[] = [];
  const required: string[] = [];
  const classes = new Set<string>();
  for (const p of model.properties) {
    let declaration: string;
    if (p.type === 'object') {
      classes.add(p.objectType!);
      const element = `${p.objectType!} *`;
      declaration = {
        single: element,
        list: `RLMArray<${p.objectType!} *><${p.objectType!}> *`,
        set: `RLMSet<${p.objectType!} *><${p.objectType!}> *`,
        dictionary: `RLMDictionary<NSString *, ${p.objectType!} *><RLMString, ${p.objectType!}> *`,
      }[p.collection];
    } else {
      const [req, opt, protocol] = objcScalars[p.type];
      const element = opt.trim();
      declaration = {
        single: p.optional ? opt : req,
        list: `RLMArray<${element}><${protocol}> *`,
        set: `RLMSet<${element}><${protocol}> *`,
        dictionary: `RLMDictionary<NSString *, ${element}><RLMString, ${protocol}> *`,
      }[p.collection];
      if (p.collection === 'single' && !p.optional && req.endsWith('*')) required.push(`@"${p.name}"`);
      if (p.collection !== 'single' && !p.optional && p.type !== 'mixed') required.push(`@"${p.name}"`);
    }
    properties.push(`@property ${declaration}${p.name};`);
  }
  const forward = [...classes].filter((name) => name !== model.name).map((name) => `@class ${name};\n`).join('');
  const methods: string[] = [];
  if (model.primaryKey) methods.push(`+ (NSString *)primaryKey {\n    return @"${model.primaryKey}";\n}`);
  if (required.length) methods.push(`+ (NSArray<NSString *> *)requiredProperties {\n    return @[${required.join(', ')}];\n}`);
  return `${forward}@interface ${model.name} : ${model.embedded ? 'RLMEmbeddedObject' : 'RLMObject'}\n${properties.join('\n')}\n@end\n\nRLM_COLLECTION_TYPE(${model.name})\n\n@implementation ${model.name}\n${methods.join('\n\n')}${methods.length ? '\n' : ''}@end\n`;
}

// ---- Dart (Realm Dart, realm_generator) ----

const dartScalars: Record<RealmScalar, string> = {
  objectId: 'ObjectId',
  string: 'String',
  int: 'int',
  bool: 'bool',
  double: 'double',
  float: 'double',
  decimal: 'Decimal128',
  date: 'DateTime',
  data: 'Uint8List',
  uuid: 'Uuid',
  mixed: 'RealmValue',
};

function dart(model: ObjectModel): { code: string; imports: string[] } {
  const needed = ["import 'package:realm/realm.dart';"];
  const lines: string[] = [];
  for (const p of model.properties) {
    if (p.type === 'data') needed.push("import 'dart:typed_data';");
    const base = p.type === 'object' ? `_${p.objectType!}` : dartScalars[p.type];
    const element = p.optional && p.collection !== 'single' && p.type !== 'mixed' && p.type !== 'object' ? `${base}?` : base;
    const field = p.name.replace(/^_+/, '') || p.name;
    if (p.primaryKey) lines.push('  @PrimaryKey()');
    if (field !== p.name) lines.push(`  @MapTo('${p.name}')`);
    if (p.collection === 'single') {
      const nullable = p.type !== 'mixed' && (p.optional || p.type === 'object');
      lines.push(`  ${nullable ? '' : 'late '}${base}${nullable ? '?' : ''} ${field};`);
    } else {
      const type = { list: `List<${element}>`, set: `Set<${element}>`, dictionary: `Map<String, ${p.type === 'object' ? `${base}?` : element}>` }[p.collection];
      lines.push(`  late ${type} ${field};`);
    }
  }
  const annotation = model.embedded ? '@RealmModel(ObjectType.embeddedObject)' : '@RealmModel()';
  return { code: `${annotation}\nclass _${model.name} {\n${lines.join('\n')}\n}\n`, imports: imports(...needed) };
}

/** The code and imports of one object model in a language. */
export function generateObjectModel(model: ObjectModel, language: DataModelLanguage): { code: string; imports: string[] } {
  switch (language) {
    case 'JAVA_SCRIPT':
      return { code: javascript(model), imports: imports('import Realm from "realm";') };
    case 'TYPE_SCRIPT':
      return { code: typescript(model), imports: imports('import Realm from "realm";') };
    case 'KOTLIN':
      return kotlin(model);
    case 'SWIFT':
      return { code: swift(model), imports: imports('import Foundation', 'import RealmSwift') };
    case 'C_SHARP':
      return { code: csharp(model), imports: imports('using System;', 'using System.Collections.Generic;', 'using MongoDB.Bson;', 'using Realms;') };
    case 'JAVA':
      return java(model);
    case 'OBJECTIVE_C':
      return { code: objectiveC(model), imports: imports('#import <Realm/Realm.h>') };
    case 'DART':
      return dart(model);
  }
}

export function isDataModelLanguage(value: string): value is DataModelLanguage {
  return (DATA_MODEL_LANGUAGES as readonly string[]).includes(value);
}

/** Every model of the app's linked data sources (clusters, not federated ones), in a language. */
export function generateDataModels(app: AppConfig, language: DataModelLanguage): DataModel[] {
  const out: DataModel[] = [];
  for (const service of app.services) {
    if (!isDataSourceType(service.config.type) || isFederatedType(service.config.type)) continue;
    for (const { model, rule, warnings, error } of readObjectModels(service.collectionRules, service.config.name)) {
      const generated = error ? { code: '', imports: [] } : generateObjectModel(model, language);
      out.push({
        service_id: service.config.id ?? '',
        rule_id: rule.id ?? '',
        model_name: model.name,
        collection_display_name: `${rule.database}.${rule.collection}`,
        import_statements: generated.imports,
        schema: generated.code,
        warnings,
        error: error ?? { error: '', error_code: '' },
      });
    }
  }
  return out;
}
