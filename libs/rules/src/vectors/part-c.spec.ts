// Every rules vector of PART C (graphql-and-rules.md), table-driven from part-c.vectors.ts.
import { RulesError } from '../errors/rules.error';
import { type EvaluationContext, normalizeUser, type RuleUser } from '../expressions/context';
import { compileExpression } from '../expressions/compile';
import { compileRules } from '../roles/compiled-rules';
import { compilePartitionPermissions } from '../sync/partition-permissions';
import { openSyncSession } from '../sync/flexible-sync';
import {
  expressionVectors,
  filterVectors,
  partitionVectors,
  type RequestExtras,
  roleVectors,
  syncVectors,
} from './part-c.vectors';

function functionCaller(extras: RequestExtras, user: RuleUser | undefined, calls: Record<string, unknown[]>) {
  return (name: string, args: unknown[]): unknown => {
    calls[name] = args;
    const fn = extras.functions?.[name];
    if (!fn) throw new Error(`no function ${name}`);
    return fn(args, user);
  };
}

describe('PART C role vectors', () => {
  for (const vector of roleVectors) {
    describe(`${vector.id} (${vector.source})`, () => {
      for (const c of vector.cases) {
        it(c.title, async () => {
          const rules = compileRules(vector.collection, vector.defaults, { namespace: 'db.coll' });
          const access = rules.forRequest({
            user: c.user,
            values: c.values,
            environment: c.environment,
            request: c.request,
            callFunction: functionCaller(c, c.user, {}),
            explain: true,
          });
          switch (c.op) {
            case 'read': {
              const decision = await access.canRead(c.doc);
              expect(decision.role).toBe(c.expect.role);
              expect(decision.allowed).toBe(c.expect.visible);
              if (c.expect.document) expect(decision.document).toEqual(c.expect.document);
              if (!c.expect.visible) expect(decision.document).toBeUndefined();
              expect(decision.trace?.role ?? null).toBe(c.expect.role);
              break;
            }
            case 'insert':
            case 'delete': {
              const decision = c.op === 'insert' ? await access.checkInsert(c.doc) : await access.checkDelete(c.doc);
              expect(decision.role).toBe(c.expect.role);
              expect(decision.allowed).toBe(c.expect.allowed);
              if (!c.expect.allowed) {
                expect(decision.error?.errorCode).toBe('SchemaValidationFailedWrite');
                expect(decision.error?.message).toBe(`${c.op} not permitted`);
              }
              break;
            }
            case 'update': {
              const decision = await access.checkUpdate(c.pre, c.post);
              expect(decision.role).toBe(c.expect.role);
              expect(decision.allowed).toBe(c.expect.allowed);
              if (!c.expect.allowed) expect(decision.error?.toBody()).toEqual({ error: 'update not permitted', error_code: 'SchemaValidationFailedWrite' });
              break;
            }
          }
        });
      }
    });
  }
});

describe('PART C expression vectors', () => {
  for (const vector of expressionVectors) {
    describe(`${vector.id} (${vector.source})`, () => {
      for (const c of vector.cases) {
        it(c.title, async () => {
          const calls: Record<string, unknown[]> = {};
          const ctx: EvaluationContext = {
            user: normalizeUser(c.user),
            root: c.root,
            prevRoot: c.prevRoot,
            this: c.this,
            prev: c.prev,
            args: c.args,
            values: c.values,
            environment: c.environment,
            request: c.request,
            callFunction: functionCaller(c, c.user, calls),
          };
          const compiled = compileExpression(vector.expression, { kind: 'document' });
          expect(await compiled.evaluate(ctx)).toBe(c.expect);
          if (c.expectCalls) expect(calls).toEqual(c.expectCalls);
        });
      }
    });
  }
});

describe('PART C Flexible Sync vectors', () => {
  for (const vector of syncVectors) {
    describe(`${vector.id} (${vector.source})`, () => {
      for (const c of vector.cases) {
        it(c.title, async () => {
          const rules = compileRules(undefined, vector.rules);
          const session = await openSyncSession(rules, { user: c.user });
          expect(session.role).toBe(c.role);
          expect(session.denied).toBe(c.denied);
          if (c.denied) expect(session.reasons.length).toBeGreaterThan(0);
          for (const { doc, read, write } of c.docs ?? []) {
            expect({ doc, read: session.canRead(doc), write: session.canWrite(doc) }).toEqual({ doc, read, write });
          }
        });
      }
    });
  }
});

describe('PART C filter vectors', () => {
  for (const vector of filterVectors) {
    it(`${vector.id} (${vector.source})`, async () => {
      const attempt = async () => {
        const rules = compileRules({ database: 'db', collection: 'movies', roles: [{ name: 'all', apply_when: {}, read: true }], filters: vector.filters });
        return rules.forRequest({ user: vector.user }).prepareQuery(vector.query, undefined, { pushdown: false });
      };
      if ('error' in vector.expect) {
        const error = await attempt().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RulesError);
        expect((error as RulesError).errorCode).toBe(vector.expect.error);
      } else {
        expect((await attempt()).query).toEqual(vector.expect.query);
      }
    });
  }
});

describe('PART C Partition-Based Sync vectors', () => {
  for (const vector of partitionVectors) {
    describe(`${vector.id} (${vector.source})`, () => {
      for (const c of vector.cases) {
        it(c.title, async () => {
          const permissions = compilePartitionPermissions(vector.permissions);
          const decision = await permissions.evaluate({ user: c.user, partition: c.partition, callFunction: functionCaller(c, c.user, {}) });
          expect({ read: decision.read, write: decision.write }).toEqual({ read: c.read, write: c.write });
        });
      }
    });
  }
});
