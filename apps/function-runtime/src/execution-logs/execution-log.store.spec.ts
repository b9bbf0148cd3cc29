import { InMemoryExecutionLogStore } from '../testing/in-memory-execution-logs';
import { type ExecutionLogEntry, type ExecutionLogQuery } from './execution-log.store';

const entry = (id: string, functionName = 'f', appId = 'app'): ExecutionLogEntry => ({
  id,
  appId,
  functionName,
  callerId: 'u',
  runAsId: 'u',
  origin: 'client',
  startedAt: new Date(0),
  durationMs: 1,
  memoryBytes: 1,
  logs: [],
  argumentsOmitted: false,
});

describe('InMemoryExecutionLogStore', () => {
  it('lists the newest entries first, filtered by app and function', async () => {
    const store = new InMemoryExecutionLogStore(10);
    store.append(entry('1'));
    store.append(entry('2', 'g'));
    store.append(entry('3'));
    store.append(entry('4', 'f', 'other'));
    expect((await store.list({ appId: 'app' })).map((e) => e.id)).toEqual(['3', '2', '1']);
    expect((await store.list({ appId: 'app', functionName: 'f' })).map((e) => e.id)).toEqual(['3', '1']);
    expect((await store.list({ appId: 'app', limit: 1 })).map((e) => e.id)).toEqual(['3']);
  });

  it('keeps only the last entries up to its capacity', async () => {
    const store = new InMemoryExecutionLogStore(3);
    for (let i = 1; i <= 5; i++) store.append(entry(String(i)));
    expect((await store.list({ appId: 'app' })).map((e) => e.id)).toEqual(['5', '4', '3']);
  });
});

describe('execution log queries', () => {
  const at = (id: string, seconds: number, more: Partial<ExecutionLogEntry> = {}): ExecutionLogEntry => ({ ...entry(id), startedAt: new Date(seconds * 1000), ...more });

  it('filters by errors, user, correlation id and date range, and pages with skip', async () => {
    const store = new InMemoryExecutionLogStore(10);
    store.append(at('1', 1, { callerId: 'ann', correlationId: 'c1' }));
    store.append(at('2', 2, { error: { code: 'FunctionExecutionError', message: 'x' } }));
    store.append(at('3', 3, { callerId: 'ann' }));
    store.append(at('4', 4));
    const ids = async (query: Omit<ExecutionLogQuery, 'appId'>) => (await store.list({ appId: 'app', ...query })).map((e) => e.id);
    expect(await ids({ errors: 'only' })).toEqual(['2']);
    expect(await ids({ errors: 'exclude' })).toEqual(['4', '3', '1']);
    expect(await ids({ userId: 'ann' })).toEqual(['3', '1']);
    expect(await ids({ correlationId: 'c1' })).toEqual(['1']);
    expect(await ids({ startDate: new Date(1000), endDate: new Date(3000) })).toEqual(['3', '2']);
    expect(await ids({ skip: 1, limit: 2 })).toEqual(['3', '2']);
  });
});
