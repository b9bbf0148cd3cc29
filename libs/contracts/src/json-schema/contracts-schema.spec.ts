import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
// ajv 6 (draft-07) is in the tree through ESLint; only this spec uses it, to check the dump against zod.
import Ajv from 'ajv';
import { allSubjects, contracts, Subjects } from '../index';
import { buildContractsJsonSchema, CONTRACTS_SCHEMA_PATH, renderContractsJsonSchema } from './contracts-schema';

const checkedIn = resolve(__dirname, '../../../..', CONTRACTS_SCHEMA_PATH);

describe('contracts JSON Schema', () => {
  it('matches the checked-in libs/contracts/contracts.schema.json (set UPDATE_CONTRACTS_SCHEMA=1 to regenerate)', () => {
    const generated = renderContractsJsonSchema();
    if (process.env['UPDATE_CONTRACTS_SCHEMA'] === '1') writeFileSync(checkedIn, generated);
    const onDisk = readFileSync(checkedIn, 'utf8');
    expect(onDisk, 'contracts.schema.json drifted from libs/contracts: run UPDATE_CONTRACTS_SCHEMA=1 npx vitest run libs/contracts').toBe(generated);
  });

  it('describes every subject with definitions that resolve', () => {
    const schema = buildContractsJsonSchema();
    const subjects = schema['x-tessera-subjects'] as Record<string, Record<string, unknown>>;
    expect(Object.keys(subjects)).toEqual([...allSubjects]);
    const definitions = schema['definitions'] as Record<string, unknown>;
    const refs = JSON.stringify(schema).match(/#\/definitions\/[^"]+/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(definitions[ref.slice('#/definitions/'.length)], ref).toBeDefined();
  });

  it('accepts and rejects the same payloads as the zod contracts', () => {
    const ajv = new Ajv({ allErrors: true });
    ajv.addSchema(buildContractsJsonSchema(), 'contracts');
    const validates = (definition: string, data: unknown): boolean => ajv.validate(`contracts#/definitions/${definition}`, data) as boolean;
    const samples: Array<[string, unknown]> = [
      [`${Subjects.FunctionsExecutionRun}.request`, { appId: 'a', functionName: 'f', args: [{ $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, [1, 'x']], caller: { type: 'user', user: { id: 'u' } }, metadata: { origin: 'client' } }],
      [`${Subjects.FunctionsExecutionRun}.request`, { appId: 'a', functionName: 'f', args: [], caller: { type: 'nobody' }, metadata: { origin: 'client' } }],
      [`${Subjects.FunctionsExecutionRun}.request`, { appId: '', functionName: 'f', args: [], caller: { type: 'system' }, metadata: { origin: 'trigger' } }],
      [`${Subjects.FunctionsExecutionRun}.response`, { ok: true, result: null }],
      [`${Subjects.FunctionsExecutionRun}.response`, { ok: false, error: { errorCode: 'X', message: 'm' } }],
      [`${Subjects.FunctionsExecutionRun}.response`, { ok: false }],
      [`${Subjects.AppsDeploymentChanged}.payload`, { appId: 'a', deploymentId: 'd', version: 3 }],
      [`${Subjects.AppsDeploymentChanged}.payload`, { appId: 'a', deploymentId: 'd', version: 1.5 }],
      [`${Subjects.DatastoreDocumentChanged}.payload`, { appId: 'a', service: 's', cluster: 'k', db: 'd', coll: 'c', operationType: 'delete', documentKey: { _id: 1 }, resumeToken: { _data: 'x' } }],
      [`${Subjects.DatastoreDocumentChanged}.payload`, { appId: 'a', service: 's', cluster: 'k', db: 'd', coll: 'c', operationType: 'drop', documentKey: { _id: 1 }, resumeToken: 'x' }],
      [`${Subjects.SystemHealthPing}.request`, { sentAt: '2026-01-01T00:00:00Z' }],
      [`${Subjects.SystemHealthPing}.response`, { service: 'x', instanceId: '' }],
    ];
    for (const [definition, data] of samples) {
      const [subject, part] = [definition.slice(0, definition.lastIndexOf('.')), definition.slice(definition.lastIndexOf('.') + 1)];
      const contract = contracts[subject as keyof typeof contracts];
      const zodSchema = contract.kind === 'command' ? (part === 'request' ? contract.request : contract.response) : contract.payload;
      expect(validates(definition, data), `${definition} ${JSON.stringify(data)}`).toBe(zodSchema.safeParse(data).success);
    }
  });
});
