/**
 * GraphQL benchmark: a list query of 20 documents with a filter, a sort and one to-one relationship,
 * answered by Tessera's client GraphQL endpoint (the gateway on Fastify: bearer token, generated schema,
 * rules, batched relationship) beside the same query answered by a hand-written graphql-yoga server over
 * the same embedded datastore with no rules and no auth (the ceiling), in one run, same load generator.
 * Prints requests/s and p50/p99 latency for each; the last line is the ratio (target >= 0.70).
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { Agent, request } from 'node:http';
import type { AppConfig } from '@tessera/app-config';
import { AppRegistry, DataSources, DeploymentStore } from '@tessera/platform';
import { startHost } from '@tessera/server';
import { loadSettings } from '@tessera/settings';
import { anonymousLogin, deployTestApp, makeTempDir, shopApp } from '@tessera/testing';
import { ObjectId } from 'bson';
import { createSchema, createYoga } from 'graphql-yoga';
import { benchServerSettings } from '../support/processes';

const PRODUCTS = 2_000;
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const QUERY = `query { products(query: { stock_gte: 500 }, sortBy: STOCK_ASC, limit: 20) { _id name stock price category_code { code label } } }`;

type Doc = Record<string, unknown>;

/** The ceiling: the same query on a hand-written schema, one find plus one `$in` find, no rules, no auth. */
function ceilingServer(dataSources: DataSources, config: AppConfig): Server {
  const db = dataSources.forService(config, 'mongodb-atlas').client.db('shop');
  const typeDefs = /* GraphQL */ `
    type Category { code: String label: String }
    type Product { _id: String name: String stock: Int price: Float category_code: Category }
    input ProductQueryInput { stock_gte: Int }
    enum ProductSortByInput { STOCK_ASC }
    type Query { products(query: ProductQueryInput, limit: Int = 100, sortBy: ProductSortByInput): [Product]! }
  `;
  const resolvers = {
    Query: {
      products: async (_root: unknown, args: { query?: { stock_gte?: number }; limit: number }) => {
      const products = await db.collection('products').find({ stock: { $gte: args.query?.stock_gte ?? 0 } }).sort({ stock: 1 }).limit(args.limit).toArray();
      const codes = [...new Set(products.map((p) => p['category_code']))];
      const categories = await db.collection('categories').find({ code: { $in: codes } }).toArray();
      const byCode = new Map(categories.map((c) => [c['code'], c]));
      return products.map((p) => ({ ...p, _id: String(p['_id']), category_code: byCode.get(p['category_code']) ?? null }));
      },
    },
  };
  const yoga = createYoga({ schema: createSchema({ typeDefs, resolvers }), graphiql: false, landingPage: false, logging: false, graphqlEndpoint: '/graphql' });
  // The yoga instance is itself a Node request listener.
  return createServer((req, res) => void yoga(req, res));
}

interface Measurement {
  requests: number;
  seconds: number;
  latencies: number[];
  p50: number;
  p99: number;
  /** Process CPU time (user + system, µs) spent during the slices: server and load generator alike. */
  cpuMicros: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 3 });

function post(url: URL, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function emptyMeasurement(): Measurement {
  return { requests: 0, seconds: 0, latencies: [], p50: 0, p99: 0, cpuMicros: 0 };
}

/** Adds `seconds` of closed-loop load with CONCURRENCY clients to `into`. */
async function measure(url: string, headers: Record<string, string>, seconds: number, into: Measurement): Promise<void> {
  const target = new URL(url);
  const body = JSON.stringify({ query: QUERY });
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const response = await post(target, body, headers);
        if (response.status !== 200) throw new Error(`${url}: ${response.status} ${response.text}`);
        into.latencies.push(performance.now() - t0);
        into.requests += 1;
      }
    }),
  );
  into.seconds += (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  into.cpuMicros += used.user + used.system;
}

function finish(m: Measurement): Measurement {
  m.latencies.sort((a, b) => a - b);
  m.p50 = m.latencies[Math.floor(m.latencies.length * 0.5)];
  m.p99 = m.latencies[Math.floor(m.latencies.length * 0.99)];
  return m;
}

function line(name: string, m: Measurement): string {
  return `${name.padEnd(26)} ${(m.requests / m.seconds).toFixed(0).padStart(6)} req/s   p50 ${m.p50.toFixed(2)} ms   p99 ${m.p99.toFixed(2)} ms   cpu ${(m.cpuMicros / m.requests).toFixed(0)} µs/req   (${m.requests} requests)`;
}

async function main(): Promise<void> {
  const dataDir = makeTempDir('tessera-bench-graphql-');
  // The real host's edge (Fastify options, hooks, filters) in front of the gateway alone.
  const env = { ...benchServerSettings, PORT: '0', HOST: '127.0.0.1', TESSERA_DATA_DIR: dataDir.path, LOG_LEVEL: 'silent', TESSERA_EXAMPLE_APP: '' };
  const host = await startHost({ ...loadSettings(env), services: ['graphql-gateway'] });
  const stores = { apps: host.nest.get(AppRegistry), deployments: host.nest.get(DeploymentStore) };

  const config = shopApp();
  const app = await deployTestApp(stores, 'graphqlbench', config);
  const { accessToken: token, userId } = await anonymousLogin(host.url, app.clientAppId);
  // The same data under one role that reads everything: what the endpoint costs when rules cost nothing.
  const open = await deployTestApp(stores, 'graphqlbenchopen', shopApp({ open: true }));
  const openLogin = await anonymousLogin(host.url, open.clientAppId);

  const dataSources = host.nest.get(DataSources);
  const db = dataSources.forService(config, 'mongodb-atlas').client.db('shop');
  await db.collection('categories').insertMany(Array.from({ length: 10 }, (_, i) => ({ code: `c${i}`, label: `Category ${i}` })));
  const products: Doc[] = Array.from({ length: PRODUCTS }, (_, i) => ({
    _id: new ObjectId(),
    name: `product ${i}`,
    owner_id: i % 2 === 0 ? userId : 'someone-else',
    visibility: 'public',
    secret: `s${i}`,
    stock: i,
    price: i / 2,
    category_code: `c${i % 10}`,
  }));
  await db.collection('products').insertMany(products);

  const ceiling = ceilingServer(dataSources, config);
  await new Promise<void>((done) => ceiling.listen(0, '127.0.0.1', done));
  const ceilingAddress = ceiling.address();
  const ceilingPort = typeof ceilingAddress === 'object' && ceilingAddress ? ceilingAddress.port : 0;

  const tesseraUrl = `${host.url}/api/client/v2.0/app/${app.clientAppId}/graphql`;
  const ceilingUrl = `http://127.0.0.1:${ceilingPort}/graphql`;
  const auth = { authorization: `Bearer ${token}` };
  const openUrl = `${host.url}/api/client/v2.0/app/${open.clientAppId}/graphql`;
  const openAuth = { authorization: `Bearer ${openLogin.accessToken}` };

  // Both answer the same 20 documents with the same categories.
  const ours = JSON.parse((await post(new URL(tesseraUrl), JSON.stringify({ query: QUERY }), auth)).text) as { data: { products: Doc[] } };
  const theirs = JSON.parse((await post(new URL(ceilingUrl), JSON.stringify({ query: QUERY }), {})).text) as { data: { products: Doc[] } };
  const openAnswer = JSON.parse((await post(new URL(openUrl), JSON.stringify({ query: QUERY }), openAuth)).text) as { data: { products: Doc[] } };
  if (JSON.stringify(ours.data.products) !== JSON.stringify(theirs.data.products) || JSON.stringify(openAnswer.data.products) !== JSON.stringify(theirs.data.products) || ours.data.products.length !== 20) {
    throw new Error(`the two servers disagree:\n${JSON.stringify(ours).slice(0, 400)}\n${JSON.stringify(theirs).slice(0, 400)}`);
  }

  console.log(`GraphQL list query: 20 of ${PRODUCTS} documents, filter + sort + one relationship; ${CONCURRENCY} clients, ${SECONDS} s each in rotating 1 s slices, after a 1 s warm-up`);
  const targets = [
    { url: tesseraUrl, headers: auth, m: emptyMeasurement() },
    { url: openUrl, headers: openAuth, m: emptyMeasurement() },
    { url: ceilingUrl, headers: {}, m: emptyMeasurement() },
  ];
  for (const target of targets) await measure(target.url, target.headers, 1, emptyMeasurement());
  // One-second slices, rotating the order, so load from elsewhere on the machine hits all three alike.
  for (let round = 0; round < SECONDS; round += 1) {
    for (let i = 0; i < targets.length; i += 1) {
      const target = targets[(round + i) % targets.length];
      await measure(target.url, target.headers, 1, target.m);
    }
  }
  const [tessera, openMeasure, hand] = targets.map((target) => finish(target.m));
  console.log(line('tessera (token, 2 roles)', tessera));
  console.log(line('tessera (token, read-all)', openMeasure));
  console.log(line('hand-written yoga (ceiling)', hand));
  console.log(`ratio read-all/ceiling: ${(openMeasure.requests / openMeasure.seconds / (hand.requests / hand.seconds)).toFixed(2)} (the endpoint without rule costs)`);
  const ratio = tessera.requests / tessera.seconds / (hand.requests / hand.seconds);
  // One process serves all three and generates the load, so CPU per request compares the work done per
  // request even when other load on the machine moves the wall-clock figures.
  console.log(`cpu per request ceiling/tessera: ${(hand.cpuMicros / hand.requests / (tessera.cpuMicros / tessera.requests)).toFixed(2)}, ceiling/read-all: ${(hand.cpuMicros / hand.requests / (openMeasure.cpuMicros / openMeasure.requests)).toFixed(2)}`);
  console.log(`ratio tessera/ceiling: ${ratio.toFixed(2)} (target >= 0.70)`);

  agent.destroy();
  await new Promise<void>((done) => ceiling.close(() => done()));
  await host.close();
  dataDir.remove();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
