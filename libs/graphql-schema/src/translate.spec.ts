import { emptyApp, type AppConfig } from '@tessera/app-config';
import { ObjectId } from 'bson';
import { buildGraphqlModel, type CollectionModel, type FieldModel } from './model';
import { ArgumentTranslator, type RelationPort } from './translate';

function movieApp(): AppConfig {
  const app = emptyApp('movies');
  app.services.push({
    config: { name: 'mongodb-atlas', type: 'mongodb-atlas' },
    rules: [],
    webhooks: [],
    collectionRules: [
      {
        database: 'db',
        collection: 'movies',
        schema: {
          title: 'Movie',
          required: ['title'],
          properties: {
            _id: { bsonType: 'objectId' },
            title: { bsonType: 'string' },
            year: { bsonType: 'int' },
            rated: { bsonType: 'string' },
            runtime: { bsonType: 'double' },
            cast: { bsonType: 'array', items: { bsonType: 'string' } },
            'box office': { bsonType: 'object', properties: { gross: { bsonType: 'double' }, currency: { bsonType: 'string' } } },
            studio: { bsonType: 'string' },
            awardIds: { bsonType: 'array', items: { bsonType: 'objectId' } },
          },
        },
        relationships: {
          studio: { ref: '#/relationship/mongodb-atlas/db/studios', source_key: 'studio', foreign_key: 'code', is_list: false },
          awardIds: { ref: '#/relationship/mongodb-atlas/db/awards', source_key: 'awardIds', foreign_key: '_id', is_list: true },
        },
      },
      { database: 'db', collection: 'studios', schema: { title: 'Studio', properties: { code: { bsonType: 'string' }, name: { bsonType: 'string' } } } },
      { database: 'db', collection: 'awards', schema: { title: 'Award', properties: { _id: { bsonType: 'objectId' }, name: { bsonType: 'string' } } } },
    ],
  });
  return app;
}

class RecordingRelations implements RelationPort {
  readonly lookups: Array<{ target: string; filter: Record<string, unknown> }> = [];
  readonly created: Array<{ target: string; documents: Record<string, unknown>[] }> = [];

  async foreignKeys(field: FieldModel, target: CollectionModel, filter: Record<string, unknown>): Promise<unknown[]> {
    this.lookups.push({ target: target.name, filter });
    return field.relationship?.isList ? ['a1', 'a2'] : ['wb'];
  }

  async create(_field: FieldModel, target: CollectionModel, documents: Record<string, unknown>[]): Promise<unknown[]> {
    this.created.push({ target: target.name, documents });
    return documents.map((_, i) => `new-${target.name}-${i}`);
  }
}

describe('GraphQL arguments to datastore arguments', () => {
  const model = buildGraphqlModel(movieApp());
  const movie = model.collections.find((c) => c.name === 'Movie') as CollectionModel;
  let relations: RecordingRelations;
  let t: ArgumentTranslator;

  beforeEach(() => {
    relations = new RecordingRelations();
    t = new ArgumentTranslator(model, relations);
  });

  it('translates the documented operators (vector 32)', async () => {
    expect(await t.filter(movie, { rated_in: ['G', 'PG-13'], year_gt: 2000 })).toEqual({ rated: { $in: ['G', 'PG-13'] }, year: { $gt: 2000 } });
    expect(await t.filter(movie, { OR: [{ rated: 'G' }, { rated: 'PG-13' }] })).toEqual({ $or: [{ rated: 'G' }, { rated: 'PG-13' }] });
    expect(await t.filter(movie, { year_exists: false })).toEqual({ year: null });
    expect(await t.filter(movie, { year_exists: true })).toEqual({ year: { $ne: null } });
    expect(t.sort({ key: 'year', direction: -1 })).toEqual({ year: -1 });
    expect(await t.filter(movie, undefined)).toEqual({});
  });

  it('merges several operators on one field and keeps equality beside them', async () => {
    expect(await t.filter(movie, { year_gte: 1990, year_lt: 2000, year_ne: 1995 })).toEqual({ year: { $gte: 1990, $lt: 2000, $ne: 1995 } });
    expect(await t.filter(movie, { year: 1999, year_ne: 2000 })).toEqual({ $and: [{ year: 1999 }, { year: { $ne: 2000 } }] });
    expect(await t.filter(movie, { AND: [{ year: 1 }], title: 'x' })).toEqual({ $and: [{ title: 'x' }, { $and: [{ year: 1 }] }] });
  });

  it('maps renamed fields and embedded objects to stored dotted paths', async () => {
    expect(await t.filter(movie, { BoxOffice: { currency: 'USD', gross_gt: 5 } })).toEqual({ 'box office.currency': 'USD', 'box office.gross': { $gt: 5 } });
    expect(await t.filter(movie, { cast_in: ['Ann'], cast_nin: ['Bob'] })).toEqual({ cast: { $in: ['Ann'], $nin: ['Bob'] } });
  });

  it('filters through relationships by the foreign keys of matching documents', async () => {
    expect(await t.filter(movie, { studio: { name: 'Warner' } })).toEqual({ studio: { $in: ['wb'] } });
    expect(relations.lookups).toEqual([{ target: 'Studio', filter: { name: 'Warner' } }]);
    expect(await t.filter(movie, { awardIds_nin: [{ name: 'Oscar' }, { name: 'Bafta' }] })).toEqual({ awardIds: { $nin: ['a1', 'a2'] } });
    expect(relations.lookups[1]).toEqual({ target: 'Award', filter: { $or: [{ name: 'Oscar' }, { name: 'Bafta' }] } });
  });

  it('builds a stored document, linking and creating related documents (create wins over link)', async () => {
    const id = new ObjectId();
    const document = await t.document(movie, { _id: id, title: 'Heat', BoxOffice: { gross: 1 }, studio: { link: 'wb', create: { code: 'new', name: 'New' } }, awardIds: { link: [id] } });
    expect(document).toEqual({ _id: id, title: 'Heat', 'box office': { gross: 1 }, studio: 'new-Studio-0', awardIds: [id] });
    expect(relations.created).toEqual([{ target: 'Studio', documents: [{ code: 'new', name: 'New' }] }]);
  });

  it('builds $set, $unset and $inc, with embedded updates on dotted paths', async () => {
    expect(await t.update(movie, { title: 'New', year_inc: 1, runtime_inc: 0.5, rated_unset: true, cast_unset: false, BoxOffice: { gross_inc: 2, currency: 'EUR' } })).toEqual({
      $set: { title: 'New', 'box office.currency': 'EUR' },
      $unset: { rated: '' },
      $inc: { year: 1, runtime: 0.5, 'box office.gross': 2 },
    });
    expect(await t.update(movie, { studio: { link: 'mgm' } })).toEqual({ $set: { studio: 'mgm' } });
  });
});
