/**
 * The `BSON` global as App Services gave it to functions (its functions/globals page): the value types are
 * callable without `new` (`BSON.ObjectId("5ad8...")`, `BSON.BSONRegExp("the great", "ig")`, `BSON.Int32(5)`,
 * `BSON.Long(low, high)`), as the bson library App Services bundled allowed and as most exported functions
 * call them, and Binary has `fromHex`/`fromBase64` and `toHex`/`toBase64`/`text`.
 *
 * The types stay the bson module's own classes: a call constructs one, `instanceof`, statics and EJSON see
 * the same class as the data path, and `new` works as before. Runs inside the isolate, before hardening
 * freezes what it touches; uses no Node API.
 */
import type { BsonModule } from './bridge';

/** The bson classes App Services' functions construct by calling them. */
const CALLABLE = ['ObjectId', 'BSONRegExp', 'Binary', 'Int32', 'Double', 'Long', 'Decimal128', 'Timestamp', 'UUID', 'Code', 'DBRef', 'MinKey', 'MaxKey', 'BSONSymbol'] as const;

type Constructor = new (...args: unknown[]) => unknown;

/** `Class(...)` does what `new Class(...)` does; everything else reaches the class itself. */
function callable<T extends object>(target: T, mapArgs: (args: unknown[]) => unknown[] = (args) => args): T {
  return new Proxy(target, {
    apply: (cls, _this, args: unknown[]) => Reflect.construct(cls as unknown as Constructor, mapArgs(args)),
    // newTarget is the proxy, whose prototype is the class's: instances are the class's own.
    construct: (cls, args: unknown[], newTarget) => Reflect.construct(cls as unknown as Constructor, mapArgs(args), newTarget) as object,
  });
}

/**
 * JavaScript's own flags (`g`, `y`) mean nothing to a $regex and bson refuses them; App Services' documented
 * `BSON.BSONRegExp("the great", "ig")` took them, so they are dropped.
 */
function regexArgs(args: unknown[]): unknown[] {
  const [pattern, options, ...rest] = args;
  return typeof options === 'string' ? [pattern, options.replace(/[gy]/g, ''), ...rest] : args;
}

/** Adds App Services' Binary helpers to the module's Binary class (what a package's `require('bson')` sees gains them too). */
function addBinaryHelpers(bson: BsonModule): void {
  const Binary = bson.Binary as unknown as Record<string, unknown> & { prototype: Record<string, unknown> };
  const define = (on: object, name: string, value: unknown): void => {
    if (!Object.prototype.hasOwnProperty.call(on, name)) Object.defineProperty(on, name, { value, writable: true, enumerable: false, configurable: true });
  };
  define(Binary, 'fromHex', (hex: string, subType?: number) => bson.Binary.createFromHexString(hex, subType));
  define(Binary, 'fromBase64', (base64: string, subType?: number) => bson.Binary.createFromBase64(base64, subType));
  define(Binary.prototype, 'toHex', function (this: InstanceType<BsonModule['Binary']>) {
    return this.toString('hex');
  });
  define(Binary.prototype, 'toBase64', function (this: InstanceType<BsonModule['Binary']>) {
    return this.toString('base64');
  });
  define(Binary.prototype, 'text', function (this: InstanceType<BsonModule['Binary']>) {
    return this.toString('utf8');
  });
}

/** The object functions see as `BSON`: the module's members, its value types callable. */
export function appServicesBson(bson: BsonModule): BsonModule {
  addBinaryHelpers(bson);
  const facade: Record<string, unknown> = { ...bson };
  for (const name of CALLABLE) {
    const cls = (bson as unknown as Record<string, unknown>)[name];
    if (typeof cls !== 'function') continue;
    facade[name] = callable(cls, name === 'BSONRegExp' ? regexArgs : undefined);
  }
  return facade as unknown as BsonModule;
}
