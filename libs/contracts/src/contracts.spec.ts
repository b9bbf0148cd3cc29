import {
  allSubjects,
  commandContract,
  contracts,
  getContract,
  InvalidPayloadError,
  isCommandSubject,
  isEventSubject,
  isWellFormedSubject,
  parseCommandRequest,
  parseCommandResponse,
  parseEventPayload,
  Subjects,
  subjectVersion,
  UnknownSubjectError,
  type FunctionRunRequest,
} from './index';

const runRequest: FunctionRunRequest = {
  appId: 'app-1',
  functionName: 'sum',
  args: [{ $numberInt: '1' }, { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' }, 'text', [true, null]],
  caller: { type: 'user', user: { id: 'u1', type: 'normal', custom_data: { plan: 'pro' }, identities: [{ id: 'i1', provider_type: 'local-userpass' }] } },
  runAs: { system: false },
  metadata: { origin: 'client', remoteIpAddress: '127.0.0.1', httpMethod: 'POST', requestHeaders: { 'User-Agent': ['realm-web'] } },
};

// Irregular past tenses allowed as event actions; every other event action must end in -ed.
const irregularPastTense = new Set(['sent', 'built', 'run', 'begun', 'done', 'lost', 'left', 'split', 'set', 'reset']);

describe('subject grammar', () => {
  it('gives every contract a well-formed subject and every subject a contract', () => {
    for (const subject of allSubjects) {
      expect(isWellFormedSubject(subject), subject).toBe(true);
      expect(getContract(subject), subject).toBeDefined();
    }
    expect(Object.keys(contracts).sort()).toEqual([...allSubjects].sort());
  });

  it('names events in the past tense', () => {
    for (const subject of allSubjects.filter(isEventSubject)) {
      const action = subject.replace(/\.v[0-9]+$/, '').split('.')[2];
      expect(action !== undefined && (action.endsWith('ed') || irregularPastTense.has(action)), `${subject} action "${action}"`).toBe(true);
    }
  });

  it('accepts dot tokens with an optional version suffix and rejects everything else', () => {
    expect(isWellFormedSubject('functions.execution.run')).toBe(true);
    expect(isWellFormedSubject('functions.execution.run.v2')).toBe(true);
    expect(isWellFormedSubject('sync-service.upload-queue.flushed.v12')).toBe(true);
    for (const bad of ['functions.run', 'Functions.execution.run', 'functions.execution.*', 'functions.execution.>', 'a..b.c', 'functions.execution.run.v1', 'functions.execution.run.v0', 'a.b.c.d', 'fn_x.a.b', 'a.b.c-']) {
      expect(isWellFormedSubject(bad), bad).toBe(false);
    }
    expect(subjectVersion('functions.execution.run')).toBe(1);
    expect(subjectVersion('functions.execution.run.v3')).toBe(3);
  });

  it('tells commands from events', () => {
    expect(isCommandSubject(Subjects.FunctionsExecutionRun)).toBe(true);
    expect(isCommandSubject(Subjects.SystemHealthPing)).toBe(true);
    expect(isEventSubject(Subjects.AppsDeploymentChanged)).toBe(true);
    expect(isEventSubject(Subjects.DatastoreDocumentChanged)).toBe(true);
    expect(isCommandSubject(Subjects.AppsDeploymentChanged)).toBe(false);
    expect(isEventSubject('nothing.here.done')).toBe(false);
  });
});

describe('parse helpers', () => {
  it('accepts a function run request with canonical EJSON arguments', () => {
    expect(parseCommandRequest(Subjects.FunctionsExecutionRun, runRequest)).toEqual(runRequest);
  });

  it('accepts a system caller without user or request details', () => {
    const request = { appId: 'a', functionName: 'f', args: [], caller: { type: 'system' }, metadata: { origin: 'trigger' } };
    expect(parseCommandRequest(Subjects.FunctionsExecutionRun, request).caller).toEqual({ type: 'system' });
  });

  it('reports every issue of an invalid request with its path', () => {
    const bad = { ...runRequest, appId: '', args: [Number.NaN], caller: { type: 'robot' } };
    let error: unknown;
    try {
      parseCommandRequest(Subjects.FunctionsExecutionRun, bad);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidPayloadError);
    const invalid = error as InvalidPayloadError;
    expect(invalid.errorCode).toBe('InvalidPayload');
    expect(invalid.subject).toBe('functions.execution.run');
    expect(invalid.part).toBe('request');
    expect(invalid.issues.map((issue) => issue.path)).toEqual(expect.arrayContaining(['appId', 'args.0', 'caller.type']));
    expect(invalid.toBody()).toEqual({ error: invalid.message, error_code: 'InvalidPayload' });
  });

  it('accepts a result or an error as a function run response, nothing else', () => {
    expect(parseCommandResponse(Subjects.FunctionsExecutionRun, { ok: true, result: { $numberLong: '7' } })).toEqual({ ok: true, result: { $numberLong: '7' } });
    expect(parseCommandResponse(Subjects.FunctionsExecutionRun, { ok: false, error: { errorCode: 'FunctionNotFound', message: 'no such function' } }).ok).toBe(false);
    expect(() => parseCommandResponse(Subjects.FunctionsExecutionRun, { ok: true })).toThrow(InvalidPayloadError);
    expect(() => parseCommandResponse(Subjects.FunctionsExecutionRun, { ok: false, result: 1 })).toThrow(/response payload/);
  });

  it('validates change events, including the operation type', () => {
    const change = {
      appId: 'app-1',
      service: 'mongodb-atlas',
      cluster: 'Cluster0',
      db: 'todo',
      coll: 'items',
      operationType: 'update',
      documentKey: { _id: { $oid: '5f0c5e0b9d1e8a2b3c4d5e6f' } },
      updateDescription: { updatedFields: { done: true }, removedFields: ['tmp'] },
      resumeToken: { _data: '8263' },
    };
    expect(parseEventPayload(Subjects.DatastoreDocumentChanged, change)).toEqual(change);
    expect(() => parseEventPayload(Subjects.DatastoreDocumentChanged, { ...change, operationType: 'drop' })).toThrow(InvalidPayloadError);
    // When the publisher read it: a positive epoch time with its fraction, nothing else.
    expect(parseEventPayload(Subjects.DatastoreDocumentChanged, { ...change, readAt: 1_764_243_600_123.25 })).toMatchObject({ readAt: 1_764_243_600_123.25 });
    for (const readAt of [0, -5, '1764243600123', Number.NaN]) expect(() => parseEventPayload(Subjects.DatastoreDocumentChanged, { ...change, readAt })).toThrow(/readAt/);
    expect(() => parseEventPayload(Subjects.AppsDeploymentChanged, { appId: 'a', deploymentId: 'd', version: -1 })).toThrow(/version/);
  });

  it('refuses a command subject where an event is expected', () => {
    expect(() => commandContract(Subjects.AppsDeploymentChanged)).toThrow(UnknownSubjectError);
    expect(() => commandContract('no.such.subject')).toThrow(/no command contract for subject no.such.subject/);
  });
});
