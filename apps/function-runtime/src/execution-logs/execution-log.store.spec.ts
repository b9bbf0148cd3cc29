import { InMemoryExecutionLogStore, type ExecutionLogEntry } from './execution-log.store';

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
