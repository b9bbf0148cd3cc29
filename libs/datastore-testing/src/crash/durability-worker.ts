/**
 * A writer process for the crash test (`crash.spec.ts`): opens the embedded store in the directory given
 * as argv[2] and, from several concurrent writers, inserts, updates and deletes documents as fast as it
 * can until it is killed. It prints `ack <id>` once an insert is acknowledged (so durable), `del <id>`
 * before it asks for a delete and `gone <id>` once the delete is acknowledged.
 */
import { openEmbeddedClient } from '@tessera/datastore';

async function main(): Promise<void> {
  const dir = process.argv[2];
  const round = Number(process.argv[3] ?? 0);
  const client = openEmbeddedClient(dir, { compactBytes: 128 * 1024, keepSegments: 8 });
  const coll = client.db('crash').collection('acks');
  process.stdout.write('ready\n');
  const writer = async (w: number) => {
    for (let i = 0; ; i++) {
      const id = `${round}-${w}-${i}`;
      if (i % 10 === 9) {
        await coll.insertMany([{ _id: `${id}-a`, w, i, pad: 'x'.repeat(200) }, { _id: `${id}-b`, w, i }]);
        process.stdout.write(`ack ${id}-a\nack ${id}-b\n`);
      } else {
        await coll.insertOne({ _id: id, w, i, n: 0, pad: 'x'.repeat(100) });
        process.stdout.write(`ack ${id}\n`);
      }
      if (i % 3 === 2) await coll.updateOne({ _id: `${round}-${w}-${i - 1}` }, { $inc: { n: 1 }, $set: { touched: true } });
      if (i % 7 === 6) {
        const victim = `${round}-${w}-${i - 2}`;
        process.stdout.write(`del ${victim}\n`);
        await coll.deleteOne({ _id: victim });
        process.stdout.write(`gone ${victim}\n`);
      }
    }
  };
  await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(writer));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
