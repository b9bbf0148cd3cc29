import { type z } from 'zod';
import { contracts } from '../registry';
import { EjsonValueSchema } from '../schemas/ejson.schema';
import { type JsonSchema, zodToJsonSchema } from './zod-to-json-schema';

/** Where the generated dump is checked in, relative to the repository root. */
export const CONTRACTS_SCHEMA_PATH = 'libs/contracts/contracts.schema.json';

/**
 * The JSON Schema document of every contract: one definition per request, response and event payload, and
 * `x-tessera-subjects` mapping each subject to its kind and definitions. Non-TypeScript consumers (and
 * reviewers of a contract change) read this file; a spec fails when the checked-in copy drifts.
 */
export function buildContractsJsonSchema(): JsonSchema {
  const named = new Map<z.ZodTypeAny, string>([[EjsonValueSchema, 'EjsonValue']]);
  const definitions: JsonSchema = { EjsonValue: zodToJsonSchema(EjsonValueSchema, { named }, true) };
  const subjects: JsonSchema = {};
  const ref = (name: string): JsonSchema => ({ $ref: `#/definitions/${name}` });
  for (const [subject, contract] of Object.entries(contracts)) {
    switch (contract.kind) {
      case 'command':
        definitions[`${subject}.request`] = zodToJsonSchema(contract.request, { named });
        definitions[`${subject}.response`] = zodToJsonSchema(contract.response, { named });
        subjects[subject] = { kind: 'command', description: contract.description, request: ref(`${subject}.request`), response: ref(`${subject}.response`) };
        break;
      case 'event':
        definitions[`${subject}.payload`] = zodToJsonSchema(contract.payload, { named });
        subjects[subject] = { kind: 'event', description: contract.description, payload: ref(`${subject}.payload`) };
        break;
    }
  }
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://tessera.dev/schemas/contracts.schema.json',
    title: 'Tessera message contracts',
    description: 'Generated from libs/contracts; do not edit. Regenerate with UPDATE_CONTRACTS_SCHEMA=1 npx vitest run libs/contracts.',
    definitions,
    'x-tessera-subjects': subjects,
  };
}

/** The dump as it is written to disk: two-space indentation and a final newline. */
export function renderContractsJsonSchema(): string {
  return `${JSON.stringify(buildContractsJsonSchema(), null, 2)}\n`;
}
