import { Script } from 'node:vm';
import ts from 'typescript';
import { type CollectionRule, type DataModel, emptyApp, generateDataModels, readObjectModels } from './index';

const personRule: CollectionRule = {
  id: 'rule-person',
  database: 'zoo',
  collection: 'people',
  schema: { title: 'Person', bsonType: 'object', required: ['_id', 'name'], properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' } } },
};

/** A schema with every kind of property Realm syncs. */
const dogRule: CollectionRule = {
  id: 'rule-dog',
  database: 'zoo',
  collection: 'dogs',
  schema: {
    title: 'Dog',
    bsonType: 'object',
    required: ['_id', 'name', 'age', 'good', 'weight', 'height', 'price', 'born', 'photo', 'tag'],
    properties: {
      _id: { bsonType: 'objectId' },
      name: { bsonType: 'string' },
      age: { bsonType: 'int' },
      good: { bsonType: 'bool' },
      weight: { bsonType: 'double' },
      height: { bsonType: 'float' },
      price: { bsonType: 'decimal' },
      born: { bsonType: 'date' },
      photo: { bsonType: 'binData' },
      tag: { bsonType: 'uuid' },
      extra: { bsonType: 'mixed' },
      nickname: { bsonType: 'string' },
      visits: { bsonType: 'long' },
      tricks: { bsonType: 'array', items: { bsonType: 'string' } },
      scores: { bsonType: 'array', items: { bsonType: ['int', 'null'] } },
      colors: { bsonType: 'array', uniqueItems: true, items: { bsonType: 'string' } },
      notes: { bsonType: 'object', additionalProperties: { bsonType: 'string' } },
      address: { title: 'Address', bsonType: 'object', required: ['street'], properties: { street: { bsonType: 'string' }, zip: { bsonType: 'string' } } },
      vets: { bsonType: 'array', items: { title: 'Vet', bsonType: 'object', properties: { name: { bsonType: 'string' } } } },
      owner: { bsonType: 'objectId' },
      friends: { bsonType: 'array', items: { bsonType: 'objectId' } },
      regex: { bsonType: 'regex' },
    },
  },
  relationships: {
    owner: { ref: '#/relationship/mongodb-atlas/zoo/people', source_key: 'owner', foreign_key: '_id', is_list: false },
    friends: { ref: '#/relationship/mongodb-atlas/zoo/dogs', source_key: 'friends', foreign_key: '_id', is_list: true },
  },
};

function models(language: Parameters<typeof generateDataModels>[1]): DataModel[] {
  const app = emptyApp('zoo');
  app.services.push({ config: { id: 'svc-1', name: 'mongodb-atlas', type: 'mongodb-atlas', config: { clusterName: 'Cluster0' } }, collectionRules: [dogRule, personRule, { database: 'zoo', collection: 'untitled', schema: { bsonType: 'object' } }], rules: [], webhooks: [] });
  return generateDataModels(app, language);
}

const model = (all: DataModel[], name: string): DataModel => all.find((m) => m.model_name === name)!;

/** Checks that JavaScript/TypeScript source parses: transpiled to CommonJS, then compiled (not run) by V8 (vm.Script, wrapped as a CommonJS module). */
function assertParses(source: string): void {
  const output = ts.transpileModule(source, { reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  expect(output.diagnostics ?? []).toEqual([]);
  expect(() => new Script(`(function (require, exports, Realm) {\n${output.outputText}\n})`)).not.toThrow();
}

describe('data models generated from collection schemas', () => {
  it('reads every property kind: scalars, optional, list, set, dictionary, embedded, links', () => {
    const read = readObjectModels([dogRule, personRule], 'mongodb-atlas');
    expect(read.map((r) => [r.model.name, r.model.embedded])).toEqual([
      ['Dog', false],
      ['Address', true],
      ['Vet', true],
      ['Person', false],
    ]);
    const dog = read[0].model;
    const property = (name: string) => dog.properties.find((p) => p.name === name);
    expect(dog.primaryKey).toBe('_id');
    expect(property('_id')).toMatchObject({ type: 'objectId', primaryKey: true, optional: false });
    expect(property('visits')).toMatchObject({ type: 'int', optional: true });
    expect(property('photo')).toMatchObject({ type: 'data', optional: false });
    expect(property('extra')).toMatchObject({ type: 'mixed', optional: true });
    expect(property('scores')).toMatchObject({ collection: 'list', type: 'int', optional: true });
    expect(property('colors')).toMatchObject({ collection: 'set', type: 'string', optional: false });
    expect(property('notes')).toMatchObject({ collection: 'dictionary', type: 'string' });
    expect(property('address')).toMatchObject({ collection: 'single', type: 'object', objectType: 'Address', optional: true });
    expect(property('vets')).toMatchObject({ collection: 'list', type: 'object', objectType: 'Vet' });
    expect(property('owner')).toMatchObject({ collection: 'single', type: 'object', objectType: 'Person', optional: true });
    expect(property('friends')).toMatchObject({ collection: 'list', type: 'object', objectType: 'Dog', optional: false });
    expect(property('regex')).toBeUndefined();
    expect(read[0].warnings).toEqual([expect.objectContaining({ error_code: 'UnsupportedType' })]);
  });

  it('answers one model per titled collection and embedded type, in the wire shape', () => {
    const all = models('TYPE_SCRIPT');
    expect(all.map((m) => m.model_name)).toEqual(['Dog', 'Address', 'Vet', 'Person']);
    expect(model(all, 'Address')).toMatchObject({ service_id: 'svc-1', rule_id: 'rule-dog', collection_display_name: 'zoo.dogs', warnings: [], error: { error: '', error_code: '' } });
    expect(model(all, 'Person')).toMatchObject({ rule_id: 'rule-person', collection_display_name: 'zoo.people', import_statements: ['import Realm from "realm";\n'] });
  });

  it('writes realm-js class models in JavaScript that parse', () => {
    const dog = model(models('JAVA_SCRIPT'), 'Dog');
    expect(dog.schema).toContain('export class Dog extends Realm.Object {');
    for (const line of [
      "name: 'Dog',",
      "primaryKey: '_id',",
      "_id: 'objectId',",
      "name: 'string',",
      "age: 'int',",
      "good: 'bool',",
      "weight: 'double',",
      "height: 'float',",
      "price: 'decimal128',",
      "born: 'date',",
      "photo: 'data',",
      "tag: 'uuid',",
      "extra: 'mixed',",
      "nickname: 'string?',",
      "visits: 'int?',",
      "tricks: 'string[]',",
      "scores: 'int?[]',",
      "colors: 'string<>',",
      "notes: 'string{}',",
      "address: 'Address?',",
      "vets: 'Vet[]',",
      "owner: 'Person?',",
      "friends: 'Dog[]',",
    ]) {
      expect(dog.schema).toContain(line);
    }
    const address = model(models('JAVA_SCRIPT'), 'Address');
    expect(address.schema).toContain('embedded: true,');
    expect(address.schema).not.toContain('primaryKey');
    for (const m of models('JAVA_SCRIPT')) assertParses(`${m.import_statements.join('')}\n${m.schema}`);
  });

  it('writes typed realm-js class models in TypeScript that parse', () => {
    const all = models('TYPE_SCRIPT');
    const dog = model(all, 'Dog').schema;
    for (const line of [
      'export class Dog extends Realm.Object<Dog> {',
      '_id!: Realm.BSON.ObjectId;',
      'name!: string;',
      'age!: number;',
      'good!: boolean;',
      'price!: Realm.BSON.Decimal128;',
      'born!: Date;',
      'photo!: ArrayBuffer;',
      'tag!: Realm.BSON.UUID;',
      'extra?: Realm.Mixed;',
      'nickname?: string;',
      'tricks!: Realm.List<string>;',
      'scores!: Realm.List<number | null>;',
      'colors!: Realm.Set<string>;',
      'notes!: Realm.Dictionary<string>;',
      'address?: Address;',
      'vets!: Realm.List<Vet>;',
      'owner?: Person;',
      'friends!: Realm.List<Dog>;',
      'static schema: Realm.ObjectSchema = {',
    ]) {
      expect(dog).toContain(line);
    }
    for (const m of all) assertParses(`${m.import_statements.join('')}\n${m.schema}`);
  });

  it('writes Realm Kotlin SDK models', () => {
    const all = models('KOTLIN');
    const dog = model(all, 'Dog');
    expect(dog.schema).toContain('class Dog : RealmObject {\n    @PrimaryKey\n    var _id: ObjectId = ObjectId()\n');
    for (const line of [
      'var name: String = ""',
      'var age: Long = 0',
      'var good: Boolean = false',
      'var weight: Double = 0.0',
      'var height: Float = 0.0f',
      'var price: Decimal128 = Decimal128("0")',
      'var born: RealmInstant = RealmInstant.from(0, 0)',
      'var photo: ByteArray = byteArrayOf()',
      'var tag: RealmUUID = RealmUUID.random()',
      'var extra: RealmAny? = null',
      'var nickname: String? = null',
      'var visits: Long? = null',
      'var tricks: RealmList<String> = realmListOf()',
      'var scores: RealmList<Long?> = realmListOf()',
      'var colors: RealmSet<String> = realmSetOf()',
      'var notes: RealmDictionary<String> = realmDictionaryOf()',
      'var address: Address? = null',
      'var vets: RealmList<Vet> = realmListOf()',
      'var owner: Person? = null',
      'var friends: RealmList<Dog> = realmListOf()',
    ]) {
      expect(dog.schema).toContain(`    ${line}\n`);
    }
    expect(dog.import_statements).toEqual(expect.arrayContaining(['import io.realm.kotlin.types.RealmObject\n', 'import io.realm.kotlin.types.annotations.PrimaryKey\n', 'import org.mongodb.kbson.ObjectId\n', 'import io.realm.kotlin.ext.realmListOf\n']));
    expect(model(all, 'Address').schema).toContain('class Address : EmbeddedRealmObject {\n    var street: String = ""\n    var zip: String? = null\n}');
  });

  it('writes RealmSwift models', () => {
    const all = models('SWIFT');
    const dog = model(all, 'Dog');
    for (const line of [
      '@Persisted(primaryKey: true) var _id: ObjectId',
      '@Persisted var name: String',
      '@Persisted var age: Int',
      '@Persisted var good: Bool',
      '@Persisted var weight: Double',
      '@Persisted var height: Float',
      '@Persisted var price: Decimal128',
      '@Persisted var born: Date',
      '@Persisted var photo: Data',
      '@Persisted var tag: UUID',
      '@Persisted var extra: AnyRealmValue',
      '@Persisted var nickname: String?',
      '@Persisted var visits: Int?',
      '@Persisted var tricks: List<String>',
      '@Persisted var scores: List<Int?>',
      '@Persisted var colors: MutableSet<String>',
      '@Persisted var notes: Map<String, String>',
      '@Persisted var address: Address?',
      '@Persisted var vets: List<Vet>',
      '@Persisted var owner: Person?',
      '@Persisted var friends: List<Dog>',
    ]) {
      expect(dog.schema).toContain(`    ${line}\n`);
    }
    expect(dog.schema.startsWith('class Dog: Object {\n')).toBe(true);
    expect(dog.import_statements).toEqual(['import Foundation\n', 'import RealmSwift\n']);
    expect(model(all, 'Vet').schema).toBe('class Vet: EmbeddedObject {\n    @Persisted var name: String?\n}\n');
  });

  it('writes C#, Java, Objective-C and Dart models with the primary key mapped', () => {
    const csharp = model(models('C_SHARP'), 'Dog').schema;
    expect(csharp).toContain('public partial class Dog : IRealmObject\n{\n    [PrimaryKey]\n    [MapTo("_id")]\n    public ObjectId Id { get; set; }');
    expect(csharp).toContain('public long? Visits { get; set; }');
    expect(csharp).toContain('public IList<Dog> Friends { get; } = null!;');
    expect(model(models('C_SHARP'), 'Address').schema).toContain('public partial class Address : IEmbeddedObject');
    const java = model(models('JAVA'), 'Dog');
    expect(java.schema).toContain('public class Dog extends RealmObject {\n    @PrimaryKey\n    private ObjectId _id;');
    expect(java.schema).toContain('private Long visits;');
    expect(java.schema).toContain('private RealmList<Dog> friends;');
    expect(model(models('JAVA'), 'Address').schema.startsWith('@RealmClass(embedded = true)\npublic class Address extends RealmObject {')).toBe(true);
    const objc = model(models('OBJECTIVE_C'), 'Dog').schema;
    expect(objc).toContain('@interface Dog : RLMObject\n@property RLMObjectId *_id;');
    expect(objc).toContain('@property NSNumber<RLMInt> *visits;');
    expect(objc).toContain('@property RLMArray<Dog *><Dog> *friends;');
    expect(objc).toContain('+ (NSString *)primaryKey {\n    return @"_id";\n}');
    const dart = model(models('DART'), 'Dog');
    expect(dart.schema).toContain("@RealmModel()\nclass _Dog {\n  @PrimaryKey()\n  @MapTo('_id')\n  late ObjectId id;");
    expect(dart.schema).toContain('  int? visits;\n');
    expect(dart.schema).toContain('  late List<_Dog> friends;\n');
    expect(dart.import_statements).toEqual(["import 'package:realm/realm.dart';\n", "import 'dart:typed_data';\n"]);
  });

  it('reports a titled schema that is not an object as the model error', () => {
    const app = emptyApp('bad');
    app.services.push({ config: { name: 'mongodb-atlas', type: 'mongodb-atlas' }, collectionRules: [{ database: 'd', collection: 'c', schema: { title: 'Bad', bsonType: 'string' } }], rules: [], webhooks: [] });
    expect(generateDataModels(app, 'SWIFT')).toEqual([
      { service_id: '', rule_id: '', model_name: 'Bad', collection_display_name: 'd.c', import_statements: [], schema: '', warnings: [], error: { error: expect.any(String) as string, error_code: 'InvalidSchema' } },
    ]);
  });
});
