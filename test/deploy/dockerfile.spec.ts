import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot } from '@tessera/testing';
import { envPairs, execForm, isIgnored, parseDockerfile, type Stage } from './dockerfile';

// No container engine runs here, so the image is never built in this suite: these tests read the
// Dockerfile and .dockerignore structurally and check what a build would do. `docker build .` on a
// machine with an engine is the real check (deploy/README.md).

const dockerfile = parseDockerfile(readFileSync(join(repositoryRoot, 'Dockerfile'), 'utf8'));
const dockerignore = readFileSync(join(repositoryRoot, '.dockerignore'), 'utf8').split('\n');
const rootPackage = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { workspaces: string[]; scripts: Record<string, string> };

function stage(name: string): Stage {
  const found = dockerfile.stages.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no stage named ${name}`);
  return found;
}

const runs = (of: Stage): string[] => of.instructions.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.body);
const runtime = (): Stage => dockerfile.stages.at(-1)!;

describe('Dockerfile (read structurally: no container engine here to build it)', () => {
  it('builds every stage from node:20-bookworm-slim', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    for (const each of dockerfile.stages) expect(each.image, each.name).toBe('node:20-bookworm-slim');
  });

  it('installs with npm ci from the lock file, builds, then drops dev dependencies', () => {
    const commands = runs(stage('build')).join(' && ');
    const order = ['npm ci', 'npm run build', 'npm prune --omit=dev'].map((command) => commands.indexOf(command));
    expect(order.every((index) => index >= 0), commands).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(rootPackage.scripts.build).toBeDefined();
    for (const each of dockerfile.stages) for (const command of runs(each)) expect(command).not.toMatch(/npm (install|i)\b/);
  });

  it('copies every workspace manifest before npm ci, so the install layer caches across source edits', () => {
    const loop = runs(stage('manifests')).join(' ');
    for (const workspace of rootPackage.workspaces) expect(loop).toContain(`${workspace}/package.json`);
    expect(loop).toContain('package-lock.json');
    const build = stage('build').instructions;
    const copyManifests = build.findIndex((instruction) => instruction.keyword === 'COPY' && instruction.flags.from === 'manifests');
    const install = build.findIndex((instruction) => instruction.keyword === 'RUN' && instruction.body.includes('npm ci'));
    const copySources = build.findIndex((instruction) => instruction.keyword === 'COPY' && instruction.body === '. .');
    expect(copyManifests).toBeGreaterThanOrEqual(0);
    expect(copyManifests).toBeLessThan(install);
    expect(install).toBeLessThan(copySources);
  });

  it('runs the server entry point as a non-root user with NODE_ENV=production', () => {
    const instructions = runtime().instructions;
    const user = instructions.filter((instruction) => instruction.keyword === 'USER').at(-1);
    expect(user, 'a USER instruction').toBeDefined();
    const [uid] = user!.body.split(':');
    expect(uid).not.toMatch(/^(root|0)$/);
    const environment = Object.assign({}, ...instructions.filter((instruction) => instruction.keyword === 'ENV').map(envPairs)) as Record<string, string>;
    expect(environment.NODE_ENV).toBe('production');
    expect(environment.TESSERA_MODE).toBe('standalone');
    const command = execForm(instructions.filter((instruction) => instruction.keyword === 'CMD').at(-1)!);
    expect(command[0]).toBe('node');
    expect(command.at(-1)).toBe('apps/server/dist/main.js');
    expect(instructions.some((instruction) => instruction.keyword === 'EXPOSE' && instruction.body === '8080')).toBe(true);
    expect(instructions.some((instruction) => instruction.keyword === 'ENTRYPOINT')).toBe(false);
  });

  it('puts only build output, production dependencies and the example app in the runtime image', () => {
    const copies = runtime().instructions.filter((instruction) => instruction.keyword === 'COPY');
    for (const copy of copies) expect(copy.flags.from, copy.args).toBe('build');
    const sources = copies.flatMap((copy) => copy.body.split(/\s+/).slice(0, -1));
    expect(sources).toEqual(expect.arrayContaining(['/app/node_modules', '/app/apps', '/app/libs', '/app/examples']));
    expect(sources).not.toContain('/app/bench');
    expect(sources).not.toContain('/app/test');
  });

  it('keeps host dependencies and build output out of the context, and everything the build reads in', () => {
    for (const path of ['node_modules', 'libs/rules/node_modules', 'apps/server/dist/main.js', '.git', 'libs/rules/tsconfig.tsbuildinfo', '.tessera']) {
      expect(isIgnored(dockerignore, path), path).toBe(true);
    }
    const buildConfig = JSON.parse(readFileSync(join(repositoryRoot, 'tsconfig.build.json'), 'utf8')) as { references: { path: string }[] };
    const needed = ['package.json', 'package-lock.json', 'tsconfig.base.json', 'tsconfig.build.json', 'examples/todo', ...buildConfig.references.flatMap((reference) => [reference.path, `${reference.path}/tsconfig.json`, `${reference.path}/src/index.ts`])];
    for (const path of needed) expect(isIgnored(dockerignore, path), path).toBe(false);
    for (const reference of buildConfig.references) expect(existsSync(join(repositoryRoot, reference.path, 'tsconfig.json')), reference.path).toBe(true);
  });

  it('reads .dockerignore patterns as Docker does', () => {
    expect(isIgnored(['**/dist'], 'dist')).toBe(true);
    expect(isIgnored(['**/dist'], 'libs/a/dist/x.js')).toBe(true);
    expect(isIgnored(['**/dist'], 'libs/a/distance.ts')).toBe(false);
    expect(isIgnored(['*.md'], 'README.md')).toBe(true);
    expect(isIgnored(['*.md'], 'docs/a.md')).toBe(false);
    expect(isIgnored(['docs', '!docs/keep.md'], 'docs/keep.md')).toBe(false);
  });
});
