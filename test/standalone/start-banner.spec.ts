import { makeTempDir, startServerProcess, type ServerProcess } from '@tessera/testing';

interface LogLine {
  level: number;
  msg?: string;
  context?: string;
}

/** Splits stdout into the JSON log lines before the banner and the banner's own lines (the rest). */
function splitOutput(stdout: string): { log: string[]; banner: string[] } {
  const lines = stdout.replace(/\n$/, '').split('\n');
  const start = lines.findIndex((line) => line.startsWith('Tessera is running'));
  expect(start, stdout).toBeGreaterThan(-1);
  // The banner opens with an empty line that sets it apart from the log.
  expect(lines[start - 1]).toBe('');
  return { log: lines.slice(0, start - 1), banner: lines.slice(start) };
}

const isJson = (line: string): boolean => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};

// `node apps/server/dist/main.js` (what `npm start` runs) with its stdout a pipe, as a newcomer or a log
// collector sees it: JSON log lines, then the banner in plain text, last.
describe('the start banner on a fresh data directory', () => {
  const dataDir = makeTempDir('tessera-banner-');
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, LOG_LEVEL: 'info' } });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it('ends the output with the banner in plain text, after every log line, with few start-up lines', async () => {
    // Serving requests proves start-up is over; nothing logged before the banner may come after it.
    const appId = /app id (\S+)/.exec(server.stdout())![1];
    expect((await fetch(`${server.url}/api/client/v2.0/app/${appId}/location`)).status).toBe(200);
    const { log, banner } = splitOutput(server.stdout());
    expect(banner[0]).toBe(`Tessera is running (standalone) at http://localhost:${server.port}`);
    expect(banner.every((line) => !isJson(line))).toBe(true);
    expect(banner.join('\n')).toContain(`app "todo": app id ${appId}`);
    expect(log.every(isJson), log.join('\n')).toBe(true);
    // Nest's wiring (a line per module, controller and route: about 160 at info before) is at debug now.
    const lines = log.map((line) => JSON.parse(line) as LogLine);
    expect(lines.filter((line) => line.context === 'RouterExplorer' || line.context === 'InstanceLoader')).toEqual([]);
    expect(log.length, log.join('\n')).toBeLessThanOrEqual(10);
  });

  it('shows the one-time admin password in the banner, and it logs the admin in', async () => {
    const password = /generated password \(shown once[^)]*\): (\S+)$/m.exec(server.stdout())?.[1];
    expect(password).toBeDefined();
    const login = await fetch(`${server.url}/api/admin/v3.0/auth/providers/local-userpass/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    expect(login.status).toBe(200);
    expect(server.stdout()).toContain(`admin API: http://localhost:${server.port}/api/admin/v3.0`);
  });
});

describe('the start-up log at debug', () => {
  const dataDir = makeTempDir('tessera-banner-debug-');
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerProcess({ env: { TESSERA_DATA_DIR: dataDir.path, LOG_LEVEL: 'debug', TESSERA_ADMIN_PASSWORD: 'banner-test-password' } });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it("keeps Nest's route lines, as JSON at debug level, before the banner", () => {
    const { log, banner } = splitOutput(server.stdout());
    expect(banner[0]).toContain('Tessera is running (standalone)');
    const routes = log.filter(isJson).map((line) => JSON.parse(line) as LogLine).filter((line) => line.context === 'RouterExplorer');
    expect(routes.map((line) => line.msg)).toContain('Mapped {/healthz, GET} route');
    expect(new Set(routes.map((line) => line.level))).toEqual(new Set([20]));
  });
});
