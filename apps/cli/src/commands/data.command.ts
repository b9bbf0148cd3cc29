import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { BSON, type Document, EJSON } from 'bson';
import { type MongoClient, MongoBulkWriteError, MongoServerError, type WriteError } from 'mongodb';
import { CliError, ExitCode } from '../cli-error';
import type { CliContext } from '../context';
import { connectDatastore, type DataTarget, resolveTarget, type TargetOptions } from '../data/datastore-connection';
import { bsonDocuments, type DumpType, dumpedCollections, dumpExists, escapeCollectionName, jsonDocuments, metadataText, openOutput, write } from '../data/dump-directory';
import { localAppId } from '../local-files';
import { table } from './apps.command';

interface CommonOptions extends TargetOptions {
  db?: string;
  collection?: string;
  type: string;
  gzip?: boolean;
}

/** Databases a whole-cluster export leaves out: the server's own, and Tessera's sync bookkeeping. */
const internalDatabases = new Set(['admin', 'local', 'config', '__tessera']);
/** Documents per insert batch of an import (and at most this many bytes). */
const batchDocuments = 1000;
const batchBytes = 8 * 1024 * 1024;

function targetOptions(command: Command): Command {
  return command
    .option('--remote <app id>', "the app whose data source's cluster to use (default: app_id in ./config.json)")
    .option('--service <name>', "the app's cluster service (default: mongodb-atlas, or its only one)")
    .option('--cluster <name>', 'a cluster by name instead of an app')
    .option('--uri <mongodb uri>', `where the cluster is served (default: TESSERA_DATASTORE_URI, else the standalone wire server on 127.0.0.1:27017); TESSERA_DATASTORE_PASSWORD authenticates`)
    .option('--db <database>', 'only this database')
    .option('--collection <name>', 'only this collection (with --db)');
}

function dumpType(value: string): DumpType {
  if (value !== 'bson' && value !== 'json') throw new CliError(`--type must be bson (mongodump's format) or json (one Extended JSON document per line), not "${value}"`, ExitCode.Usage);
  return value;
}

/** The namespaces to work on: the app's rule collections (or the whole cluster), narrowed by --db and --collection. */
async function namespaces(client: MongoClient, target: DataTarget, options: CommonOptions): Promise<{ db: string; collections: Document[] }[]> {
  if (options.collection && !options.db) throw new CliError('--collection needs --db', ExitCode.Usage);
  let databases = (await client.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name).filter((name) => !internalDatabases.has(name));
  const ruled = target.collections?.length ? new Set(target.collections.map((c) => `${c.database}.${c.collection}`)) : undefined;
  if (ruled) databases = databases.filter((name) => target.collections?.some((c) => c.database === name));
  if (options.db) databases = databases.filter((name) => name === options.db);
  const out: { db: string; collections: Document[] }[] = [];
  for (const db of databases.sort()) {
    const listed = (await client.db(db).listCollections().toArray()) as Document[];
    const collections = listed
      .filter((info) => !String(info.name).startsWith('system.'))
      .filter((info) => !ruled || ruled.has(`${db}.${String(info.name)}`))
      .filter((info) => !options.collection || info.name === options.collection)
      .sort((a, b) => String(a.name).localeCompare(String(b.name)));
    if (collections.length) out.push({ db, collections });
  }
  return out;
}

async function exportData(ctx: CliContext, options: CommonOptions & { out: string }): Promise<void> {
  const type = dumpType(options.type);
  const target = await resolveTarget(ctx, options, () => localAppId('.'));
  const client = await connectDatastore(ctx, target, options.uri);
  const summary: { namespace: string; documents: number; indexes: number; file?: string }[] = [];
  try {
    const out = resolve(options.out);
    for (const { db, collections } of await namespaces(client, target, options)) {
      const dir = join(out, db);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const info of collections) {
        const name = String(info.name);
        const coll = client.db(db).collection(name);
        const view = info.type === 'view';
        const indexes = view ? [] : ((await coll.listIndexes().toArray()) as Document[]);
        const base = join(dir, escapeCollectionName(name));
        const metadata = openOutput(`${base}.metadata.json`, options.gzip === true);
        await write(metadata.stream, metadataText({ options: (info.options as Document | undefined) ?? {}, indexes, collectionName: name, type: view ? 'view' : 'collection' }));
        await metadata.close();
        let documents = 0;
        if (!view) {
          // Documents as the server sends them: BSON bytes straight to the file (no re-encoding), or EJSON lines.
          const data = openOutput(`${base}.${type}`, options.gzip === true);
          const total = await coll.estimatedDocumentCount();
          const progress = ctx.output.progress(`${db}.${name}`);
          const cursor = coll.find({}, { raw: type === 'bson', batchSize: 1000 });
          for await (const doc of cursor) {
            await write(data.stream, type === 'bson' ? (doc as unknown as Uint8Array) : `${EJSON.stringify(doc, { relaxed: false })}\n`);
            if (++documents % 1000 === 0) progress.update(documents, total);
          }
          progress.finish();
          await data.close();
        }
        ctx.output.info(`${db}.${name}: ${documents} document(s), ${indexes.length} index(es)${view ? ' (view: definition only)' : ''}`);
        summary.push({ namespace: `${db}.${name}`, documents, indexes: indexes.length, file: `${base}.${view ? 'metadata.json' : type}${options.gzip ? '.gz' : ''}` });
      }
    }
  } finally {
    await client.close();
  }
  const documents = summary.reduce((sum, entry) => sum + entry.documents, 0);
  ctx.output.result({ cluster: target.cluster, out: resolve(options.out), collections: summary, documents }, `exported ${summary.length} collection(s), ${documents} document(s) of cluster "${target.cluster}" to ${resolve(options.out)}`, 'Exported data');
}

/** Inserts one batch; documents refused one by one (a duplicate _id) are counted, not fatal (as mongorestore). */
async function insertBatch(client: MongoClient, db: string, name: string, batch: Document[]): Promise<{ inserted: number; failed: string[] }> {
  if (batch.length === 0) return { inserted: 0, failed: [] };
  try {
    const result = await client.db(db).collection(name).insertMany(batch, { ordered: false });
    return { inserted: result.insertedCount, failed: [] };
  } catch (error) {
    if (error instanceof MongoBulkWriteError) {
      const listed: unknown = error.writeErrors;
      const errors = (Array.isArray(listed) ? listed : [listed]) as WriteError[];
      return { inserted: error.result.insertedCount, failed: errors.map((e) => e.errmsg ?? 'refused') };
    }
    throw error;
  }
}

async function importData(ctx: CliContext, options: CommonOptions & { dir: string; drop?: boolean; noIndexRestore?: boolean }): Promise<void> {
  const type = dumpType(options.type);
  const dir = resolve(options.dir);
  if (!dumpExists(dir)) throw new CliError(`no such directory: ${dir}`, ExitCode.NotFound);
  if (options.collection && !options.db) throw new CliError('--collection needs --db', ExitCode.Usage);
  const target = await resolveTarget(ctx, options, () => localAppId('.'));
  let found = await dumpedCollections(dir, type);
  if (options.db) found = found.filter((entry) => entry.db === options.db);
  if (options.collection) found = found.filter((entry) => entry.collection === options.collection);
  if (found.length === 0) throw new CliError(`${dir} holds no ${type === 'bson' ? 'mongodump collections (<db>/<collection>.bson)' : 'JSON collections (<db>/<collection>.json)'}${options.db ? ` of database ${options.db}` : ''}`, ExitCode.NotFound);
  const client = await connectDatastore(ctx, target, options.uri);
  const summary: { namespace: string; documents: number; failed: number; indexes: number }[] = [];
  const failures: string[] = [];
  try {
    for (const entry of found) {
      const namespace = `${entry.db}.${entry.collection}`;
      const database = client.db(entry.db);
      if (options.drop) await database.collection(entry.collection).drop().catch(() => false);
      const collectionOptions = entry.metadata?.options ?? {};
      if (typeof collectionOptions.viewOn === 'string') {
        await database.createCollection(entry.collection, { viewOn: collectionOptions.viewOn, pipeline: (collectionOptions.pipeline as Document[] | undefined) ?? [] });
        ctx.output.info(`${namespace}: view on ${collectionOptions.viewOn}`);
        summary.push({ namespace, documents: 0, failed: 0, indexes: 0 });
        continue;
      }
      let documents = 0;
      let failed = 0;
      if (entry.dataFile) {
        const progress = ctx.output.progress(namespace);
        let batch: Document[] = [];
        let bytes = 0;
        const flush = async () => {
          const done = await insertBatch(client, entry.db, entry.collection, batch);
          documents += done.inserted;
          failed += done.failed.length;
          failures.push(...done.failed.slice(0, 5).map((message) => `${namespace}: ${message}`));
          batch = [];
          bytes = 0;
          progress.update(documents);
        };
        // BSON values keep their types (Int32, Double, Long...) through the driver: no promotion to JS numbers.
        const source: AsyncIterable<{ doc: Document; size: number }> =
          type === 'bson'
            ? (async function* () {
                for await (const raw of bsonDocuments(entry.dataFile!)) yield { doc: BSON.deserialize(raw, { promoteValues: false }), size: raw.length };
              })()
            : (async function* () {
                for await (const doc of jsonDocuments(entry.dataFile!)) yield { doc, size: BSON.calculateObjectSize(doc) };
              })();
        for await (const { doc, size } of source) {
          batch.push(doc);
          bytes += size;
          if (batch.length >= batchDocuments || bytes >= batchBytes) await flush();
        }
        await flush();
        progress.finish();
      } else {
        // A collection with metadata and no documents still exists after the import.
        await database.createCollection(entry.collection).catch((error: unknown) => {
          if (!(error instanceof MongoServerError && error.codeName === 'NamespaceExists')) throw error;
        });
      }
      let indexes = 0;
      if (!options.noIndexRestore) {
        for (const index of entry.metadata?.indexes ?? []) {
          if (index.name === '_id_') continue;
          // listIndexes' fields that are not options of createIndexes (the version, the namespace of old servers).
          const { v: _v, ns: _ns, ...spec } = index;
          try {
            await database.command({ createIndexes: entry.collection, indexes: [spec] });
            indexes++;
          } catch (error) {
            failures.push(`${namespace}: index ${String(index.name)}: ${error instanceof Error ? error.message : String(error)}`);
            failed++;
          }
        }
      }
      ctx.output.info(`${namespace}: ${documents} document(s) restored${failed ? `, ${failed} failure(s)` : ''}, ${indexes} index(es)`);
      summary.push({ namespace, documents, failed, indexes });
    }
  } finally {
    await client.close();
  }
  const documents = summary.reduce((sum, entry) => sum + entry.documents, 0);
  const failedTotal = summary.reduce((sum, entry) => sum + entry.failed, 0);
  ctx.output.result({ cluster: target.cluster, collections: summary, documents, failed: failedTotal, failures }, () =>
    [`imported ${summary.length} collection(s), ${documents} document(s) into cluster "${target.cluster}"`, ...failures.map((line) => `  ${line}`)].join('\n'),
    'Imported data',
  );
  if (failedTotal > 0) throw new CliError(`${failedTotal} document(s) or index(es) were not restored (see above)`, ExitCode.Failure);
}

async function listIndexes(ctx: CliContext, options: CommonOptions): Promise<void> {
  const target = await resolveTarget(ctx, options, () => localAppId('.'));
  const client = await connectDatastore(ctx, target, options.uri);
  const rows: { namespace: string; name: string; key: Document; unique: boolean; sparse: boolean; declared: boolean }[] = [];
  const missing: { namespace: string; name: string; key: Document }[] = [];
  try {
    for (const { db, collections } of await namespaces(client, target, options)) {
      for (const info of collections) {
        if (info.type === 'view') continue;
        const name = String(info.name);
        const declared = target.collections?.find((c) => c.database === db && c.collection === name)?.indexes ?? [];
        const declaredName = (index: (typeof declared)[number]) => index.name ?? Object.entries(index.key).map(([field, direction]) => `${field}_${direction}`).join('_');
        const existing = (await client.db(db).collection(name).listIndexes().toArray()) as Document[];
        for (const index of existing) {
          rows.push({ namespace: `${db}.${name}`, name: String(index.name), key: index.key as Document, unique: index.unique === true, sparse: index.sparse === true, declared: declared.some((d) => declaredName(d) === index.name) });
        }
        for (const index of declared) if (!existing.some((e) => e.name === declaredName(index))) missing.push({ namespace: `${db}.${name}`, name: declaredName(index), key: index.key });
      }
    }
  } finally {
    await client.close();
  }
  ctx.output.result({ cluster: target.cluster, indexes: rows, declaredButMissing: missing }, () => {
    const lines = table(
      ['NAMESPACE', 'INDEX', 'KEY', 'OPTIONS', 'DECLARED'],
      rows.map((row) => [row.namespace, row.name, JSON.stringify(row.key), [row.unique ? 'unique' : '', row.sparse ? 'sparse' : ''].filter(Boolean).join(',') || '-', row.declared ? 'yes' : 'no']),
    );
    const notes = missing.map((index) => `declared but missing (deploy the app to create it): ${index.namespace} ${index.name} ${JSON.stringify(index.key)}`);
    return [lines, ...notes].join('\n');
  }, 'Indexes');
}

/** `data export`, `data import`, `data indexes`: an app's (or a cluster's) data over the MongoDB wire protocol. */
export function registerDataCommands(program: Command, context: () => CliContext): void {
  const data = program.command('data').description("move an app's data: dump and restore in mongodump's format, list indexes");
  targetOptions(data.command('export'))
    .description("dump the app's collections (documents, indexes, options) in mongodump's directory format, or as Extended JSON lines")
    .requiredOption('--out <dir>', 'the dump directory (<db>/<collection>.bson and .metadata.json, as mongodump writes them)')
    .option('--type <type>', 'bson (mongodump, default) or json (one canonical Extended JSON document per line)', 'bson')
    .option('--gzip', 'compress every file (.gz), as mongodump --gzip')
    .action((options: CommonOptions & { out: string }) => exportData(context(), options));
  targetOptions(data.command('import'))
    .description('restore a mongodump directory (from Atlas, MongoDB or `tessera data export`) or Extended JSON lines into the app\'s cluster')
    .requiredOption('--dir <dir>', 'the dump directory (<db>/<collection>.bson[.gz] with .metadata.json[.gz])')
    .option('--type <type>', 'bson (mongodump, default) or json (one Extended JSON document per line)', 'bson')
    .option('--drop', 'drop each collection before restoring it')
    .option('--no-index-restore', "don't create the dump's indexes")
    .action((options: CommonOptions & { dir: string; drop?: boolean; indexRestore?: boolean }) => importData(context(), { ...options, noIndexRestore: options.indexRestore === false }));
  targetOptions(data.command('indexes'))
    .description("list the indexes of the app's collections, and which the app declares")
    .action((options: CommonOptions) => listIndexes(context(), { ...options, type: 'bson' }));
}
