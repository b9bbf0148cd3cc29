import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot } from './server-process';

/**
 * The workspace's shared material (spec, references, conformance suites) lives beside the repository, not in
 * it: `../shared` of the checkout, `/work/shared` on the team's machines, or wherever TESSERA_SHARED_DIR says.
 * Returns the directory holding `relative`, or undefined when none does (tests then skip, saying why).
 */
export function sharedMaterial(relative: string): string | undefined {
  const roots = [process.env['TESSERA_SHARED_DIR'], join(repositoryRoot, '..', 'shared'), '/work/shared'];
  for (const root of roots) {
    if (!root) continue;
    const candidate = join(root, relative);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

export function sharedMaterialSkipReason(relative: string): string {
  return `shared material ${relative} not found beside the repository, in /work/shared or TESSERA_SHARED_DIR`;
}
