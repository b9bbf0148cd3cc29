import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Subjects } from '@tessera/contracts';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md draws the services and the subjects between them: every subject it names must exist
 * in the contracts, and every subject of the contracts must be in the drawing, so the document cannot drift
 * from the code as subjects come and go.
 */
const document = readFileSync(resolve(__dirname, '../../docs/architecture.md'), 'utf8');
const fileEnding = /\.(ts|js|mjs|md|json|ya?ml|txt)$/;
// OpenTelemetry attribute names (`db.collection.name`) look like subjects and are not.
const telemetryAttribute = /^(db|http|net|rpc|service|server|url)\.|^messaging\.(destination|system|operation|message)\./;
const mentioned = new Set(
  [...document.matchAll(/\b[a-z][a-z0-9-]*(?:\.[a-z][a-z0-9-]*){2,3}\b/g)].map((match) => match[0]).filter((name) => !fileEnding.test(name) && !telemetryAttribute.test(name)),
);

describe('docs/architecture.md', () => {
  it('names only subjects the contracts define', () => {
    const known = new Set<string>(Object.values(Subjects));
    expect([...mentioned].filter((name) => !known.has(name))).toEqual([]);
  });

  it('names every subject the contracts define', () => {
    expect(Object.values(Subjects).filter((subject) => !mentioned.has(subject))).toEqual([]);
  });
});
