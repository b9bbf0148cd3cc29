import { z } from 'zod';
import { exactShapeCheck } from './exact-shape';
import { contracts, type Contract } from './registry';
import { ZodEjsonValue } from './schemas/ejson.schema';
import { FunctionRunRequestSchema } from './schemas/functions-execution-run.schema';

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
function pick<T>(rng: Rng, items: readonly T[]): T {
  const item = items[Math.floor(rng() * items.length)];
  if (item === undefined) throw new Error('nothing to pick from');
  return item;
}

function jsonValue(rng: Rng, depth: number): unknown {
  const kind = Math.floor(rng() * (depth > 2 ? 4 : 6));
  if (kind === 0) return pick(rng, ['', 'a', 'text', '$oid']);
  if (kind === 1) return pick(rng, [0, 1, -2.5, 1e21]);
  if (kind === 2) return rng() < 0.5;
  if (kind === 3) return null;
  if (kind === 4) return Array.from({ length: Math.floor(rng() * 3) }, () => jsonValue(rng, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(rng() * 3); i > 0; i--) out[pick(rng, ['a', 'b', '$numberInt', 'x y'])] = jsonValue(rng, depth + 1);
  return out;
}

function sized(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (Math.min(max, min + 4) - min + 1));
}

/** A value the schema accepts, made by walking it (the schema kinds the contracts use). */
function generate(schema: z.ZodTypeAny, rng: Rng, depth = 0): unknown {
  if (schema instanceof ZodEjsonValue) return jsonValue(rng, depth);
  if (schema instanceof z.ZodString) {
    const checks = schema._def.checks;
    if (checks.some((check) => check.kind === 'datetime')) return new Date(1_700_000_000_000 + Math.floor(rng() * 1e9)).toISOString();
    const min = Math.max(0, ...checks.map((check) => (check.kind === 'min' ? check.value : 0)));
    const max = Math.min(40, ...checks.map((check) => (check.kind === 'max' ? check.value : 40)));
    return 'x'.repeat(sized(rng, min, max));
  }
  if (schema instanceof z.ZodNumber) {
    const min = Math.max(-5, ...schema._def.checks.map((check) => (check.kind === 'min' ? check.value : -5)));
    const max = Math.min(600, ...schema._def.checks.map((check) => (check.kind === 'max' ? check.value : 600)));
    return Math.round(min + rng() * (max - min));
  }
  if (schema instanceof z.ZodBoolean) return rng() < 0.5;
  if (schema instanceof z.ZodNull) return null;
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodAny) return jsonValue(rng, depth);
  if (schema instanceof z.ZodLiteral) return schema.value as unknown;
  if (schema instanceof z.ZodEnum) return pick(rng, schema.options as string[]);
  if (schema instanceof z.ZodArray) {
    const def = schema._def as z.ZodArrayDef;
    return Array.from({ length: sized(rng, def.minLength?.value ?? 0, depth > 3 ? 0 : (def.maxLength?.value ?? 3)) }, () => generate(def.type, rng, depth + 1));
  }
  if (schema instanceof z.ZodObject) {
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries((schema._def as z.ZodObjectDef).shape())) {
      if (field.isOptional() && rng() < 0.4) continue;
      out[key] = generate(field, rng, depth + 1);
    }
    return out;
  }
  if (schema instanceof z.ZodRecord) {
    const out: Record<string, unknown> = {};
    for (let i = depth > 3 ? 0 : Math.floor(rng() * 3); i > 0; i--) out[`k${i}`] = generate(schema.valueSchema as z.ZodTypeAny, rng, depth + 1);
    return out;
  }
  if (schema instanceof z.ZodOptional) return rng() < 0.3 ? undefined : generate(schema.unwrap() as z.ZodTypeAny, rng, depth);
  if (schema instanceof z.ZodNullable) return rng() < 0.3 ? null : generate(schema.unwrap() as z.ZodTypeAny, rng, depth);
  if (schema instanceof z.ZodDefault) return generate(schema.removeDefault() as z.ZodTypeAny, rng, depth);
  if (schema instanceof z.ZodDiscriminatedUnion || schema instanceof z.ZodUnion) return generate(pick(rng, schema.options as z.ZodTypeAny[]), rng, depth);
  if (schema instanceof z.ZodLazy) return generate(schema.schema as z.ZodTypeAny, rng, depth + 1);
  if (schema instanceof z.ZodEffects) return generate(schema.innerType() as z.ZodTypeAny, rng, depth);
  throw new Error(`no generator for ${schema.constructor.name}`);
}

/** Every place inside a value where a mutation can go: [container, key]. */
function slots(value: unknown, out: Array<[Record<string, unknown> | unknown[], string | number]> = []): Array<[Record<string, unknown> | unknown[], string | number]> {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      out.push([value, index]);
      slots(item, out);
    });
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, key]);
      slots(item, out);
    }
  }
  return out;
}

/** One change of the kinds a wrong payload has: an unknown key, a missing or mistyped field, a stray prototype key. */
function mutate(value: unknown, rng: Rng): unknown {
  const copy = structuredClone(value);
  const objects = [copy, ...slots(copy).map(([container, key]) => (container as Record<string | number, unknown>)[key])].filter((item) => typeof item === 'object' && item !== null && !Array.isArray(item)) as Record<string, unknown>[];
  const places = slots(copy);
  const kind = Math.floor(rng() * 6);
  if (kind === 0 && objects.length > 0) pick(rng, objects)['unexpected'] = 1;
  else if (kind === 1 && objects.length > 0) Object.defineProperty(pick(rng, objects), '__proto__', { value: { x: 1 }, enumerable: true, configurable: true, writable: true });
  else if (places.length > 0) {
    const [container, key] = pick(rng, places);
    const target = container as Record<string | number, unknown>;
    if (kind === 2 && !Array.isArray(container)) delete target[key];
    else if (kind === 3) target[key] = typeof target[key] === 'string' ? 7 : 'seven';
    else if (kind === 4) target[key] = undefined;
    else target[key] = Number.NaN;
  }
  return copy;
}

function schemasOf(contract: Contract): z.ZodTypeAny[] {
  return contract.kind === 'command' ? [contract.request, contract.response] : [contract.payload];
}

describe('exactShapeCheck', () => {
  it('accepts a value only where zod accepts it and answers an equal value, for every contract', () => {
    let accepted = 0;
    let checked = 0;
    for (const [subject, contract] of Object.entries(contracts) as Array<[string, Contract]>) {
      for (const schema of schemasOf(contract)) {
        const check = exactShapeCheck(schema);
        for (let seed = 1; seed <= 150; seed++) {
          const rng = random(seed);
          const valid = generate(schema, rng);
          for (const value of [valid, mutate(valid, rng), mutate(valid, rng)]) {
            checked++;
            if (!check(value)) continue;
            accepted++;
            const parsed = schema.safeParse(value);
            expect(parsed.success, `${subject} seed ${seed}: ${JSON.stringify(value)}`).toBe(true);
            expect(parsed.success ? parsed.data : undefined, `${subject} seed ${seed}`).toStrictEqual(value);
          }
        }
      }
    }
    // The fast path is taken for most well-formed payloads (else it would save nothing).
    expect(accepted).toBeGreaterThan(checked / 4);
  });

  it('takes the fast path for a function call as the client API builds it, and not with a key zod would strip', () => {
    const request = {
      appId: 'app-1',
      functionName: 'sum',
      args: [{ $numberInt: '1' }, 'text', [true, null]],
      caller: { type: 'user', user: { id: 'u1', type: 'normal', custom_data: { plan: 'pro' }, identities: [{ id: 'i1', provider_type: 'local-userpass' }] } },
      metadata: { origin: 'client', remoteIpAddress: '127.0.0.1', httpMethod: 'POST', requestHeaders: { 'User-Agent': ['realm-web'] } },
    };
    const check = exactShapeCheck(FunctionRunRequestSchema);
    expect(check(request)).toBe(true);
    expect(check({ ...request, extra: true })).toBe(false);
    expect(check({ ...request, caller: { ...request.caller, user: { ...request.caller.user, password: 'x' } } })).toBe(false);
    expect(check({ ...request, functionName: '' })).toBe(false);
    expect(check({ ...request, args: [undefined] })).toBe(false);
    expect(check({ ...request, metadata: { ...request.metadata, origin: 'elsewhere' } })).toBe(false);
  });

  it('leaves to zod what it cannot answer exactly: unions, refinements, transforms, defaults left out, coercion', () => {
    expect(exactShapeCheck(z.union([z.string(), z.number()]))('a')).toBe(false);
    expect(exactShapeCheck(z.string().refine((text) => text.length > 0))('a')).toBe(false);
    expect(exactShapeCheck(z.string().transform((text) => text.length))('a')).toBe(false);
    expect(exactShapeCheck(z.string().email())('a@b.c')).toBe(false);
    expect(exactShapeCheck(z.object({ n: z.number().default(1) }))({})).toBe(false);
    expect(exactShapeCheck(z.object({ n: z.number().default(1) }))({ n: 2 })).toBe(true);
    expect(exactShapeCheck(z.coerce.number())(1)).toBe(false);
    expect(exactShapeCheck(z.object({}).catchall(z.number()))({})).toBe(false);
    expect(exactShapeCheck(z.object({ a: z.number() }).passthrough())({ a: 1, b: 2 })).toBe(true);
    expect(exactShapeCheck(z.object({ a: z.number() }).strict())({ a: 1, b: 2 })).toBe(false);
  });

  it('checks numbers, strings, arrays and records as zod does', () => {
    const int = exactShapeCheck(z.number().int().min(100).max(599));
    expect([int(200), int(99), int(600), int(200.5), int(Number.NaN), int('200')]).toEqual([true, false, false, false, false, false]);
    expect(exactShapeCheck(z.number())(Number.NaN)).toBe(false);
    expect(exactShapeCheck(z.number().finite())(Infinity)).toBe(false);
    expect(exactShapeCheck(z.number().gt(0))(0)).toBe(false);
    const name = exactShapeCheck(z.string().min(1).max(3).regex(/^[a-z]+$/g));
    expect([name('ab'), name(''), name('abcd'), name('AB'), name('ab')]).toEqual([true, false, false, false, true]);
    const list = exactShapeCheck(z.array(z.string()).min(1).max(2));
    expect([list(['a']), list([]), list(['a', 'b', 'c']), list([1])]).toEqual([true, false, false, false]);
    const headers = exactShapeCheck(z.record(z.array(z.string())));
    expect([headers({ a: ['x'] }), headers({ a: 'x' }), headers([]), headers(JSON.parse('{"__proto__": ["x"]}'))]).toEqual([true, false, false, false]);
  });
});
