// Test fixture: a runtime wired to in-memory ports, with small limits. Used by specs only.
import type { CallerUser } from '@tessera/contracts';
import { InMemoryExecutionLogStore } from './in-memory-execution-logs';
import type { CanEvaluateEvaluator, FunctionRuntimeOptions } from '../function-runtime.options';
import { FunctionRuntimeService, type ExecuteFunctionRequest } from '../function-runtime.service';
import { NodeHttpPort, type HttpPort } from '../ports/http.port';
import { InMemoryAppFunctions, InMemoryDataAccess, InMemoryUsers, InMemoryValues } from './in-memory-ports';

export const APP = 'app-1';
export const ALICE: CallerUser = {
  id: 'alice-id',
  type: 'normal',
  data: { email: 'alice@example.com' },
  custom_data: { plan: 'pro' },
  identities: [{ id: 'alice-ident', provider_type: 'local-userpass' }],
};

/** `http` defaults to the real port with loopback IPv4 allowed, for the specs' local test servers. */
export function makeRuntime(options: Partial<FunctionRuntimeOptions> = {}, extra: { canEvaluate?: CanEvaluateEvaluator; http?: HttpPort } = {}) {
  const functions = new InMemoryAppFunctions();
  const data = new InMemoryDataAccess();
  const values = new InMemoryValues();
  const users = new InMemoryUsers();
  const logs = new InMemoryExecutionLogStore(100);
  users.add(ALICE);
  const runtime = new FunctionRuntimeService({
    dependencies: { functions, dataAccess: data, values, users, logs, http: extra.http ?? new NodeHttpPort({ timeoutMs: 5_000, allow: ['127.0.0.1'] }), canEvaluate: extra.canEvaluate },
    options: { timeLimitMs: 2_000, memoryLimitMb: 64, sandboxesPerApp: 2, ...options },
  });
  const call = (name: string, args: unknown[] = [], more: Partial<ExecuteFunctionRequest> = {}) =>
    runtime.execute({ appId: APP, name, arguments: args, caller: { type: 'user', user: ALICE }, origin: 'client', ...more });
  return { runtime, functions, data, values, users, logs, call };
}
