import { useState } from 'preact/hooks';
import { ErrorNote, Json, Loading, parseJson, useAction, useLoad, UserIdField, type AppPageProps } from '../ui';
import type { AppUser } from './users';

interface FunctionSummary {
  _id: string;
  name: string;
  private: boolean;
}

interface RunResult {
  result: unknown;
  logs: string[];
  error_logs: string[];
  stats: { execution_time: string };
}

/** Runs a function in the function runtime as the system user or as one of the app's users, with arguments. */
export function FunctionsPage({ api, appId }: AppPageProps) {
  const functions = useLoad(() => api.get<FunctionSummary[]>(api.app(appId, '/functions')), [appId]);
  const users = useLoad(() => api.get<AppUser[]>(api.app(appId, '/users')), [appId]);
  const [name, setName] = useState('');
  const [runAs, setRunAs] = useState<'system' | 'user'>('system');
  const [userId, setUserId] = useState('');
  const [args, setArgs] = useState('[]');
  const [result, setResult] = useState<RunResult | undefined>();
  const action = useAction();
  const chosen = name || functions.data?.[0]?.name || '';

  const submit = (event: Event) => {
    event.preventDefault();
    setResult(undefined);
    void action.run(async () => {
      const parsed = parseJson(args, 'Arguments') ?? [];
      if (!Array.isArray(parsed)) throw new Error('Arguments must be a JSON array, e.g. [1, "two"]');
      if (runAs === 'user' && !userId.trim()) throw new Error('Choose or type the user to run as');
      const query = runAs === 'user' ? `?user_id=${encodeURIComponent(userId.trim())}` : '?run_as_system=true';
      setResult(await api.request<RunResult>('POST', api.app(appId, `/debug/execute_function${query}`), { json: { name: chosen, arguments: parsed } }));
    });
  };

  return (
    <section aria-labelledby="functions-title">
      <h1 id="functions-title">Run a function</h1>
      <Loading loaded={functions} />
      <form class="card" onSubmit={submit} aria-label="Run a function">
        <div class="row">
          <label>
            Function
            <select name="function" value={chosen} onChange={(event) => setName(event.currentTarget.value)}>
              {(functions.data ?? []).map((fn) => (
                <option key={fn._id} value={fn.name}>
                  {fn.name}
                  {fn.private ? ' (private)' : ''}
                </option>
              ))}
            </select>
          </label>
          <fieldset>
            <legend>Run as</legend>
            <label class="inline">
              <input type="radio" name="run-as" checked={runAs === 'system'} onChange={() => setRunAs('system')} /> System
            </label>
            <label class="inline">
              <input type="radio" name="run-as" checked={runAs === 'user'} onChange={() => setRunAs('user')} /> A user
            </label>
          </fieldset>
          {runAs === 'user' && (
            <UserIdField id="function-users" value={userId} onInput={setUserId} users={users.data ?? []} />
          )}
        </div>
        <label>
          Arguments (a JSON array)
          <textarea name="arguments" rows={4} spellcheck={false} value={args} onInput={(event) => setArgs(event.currentTarget.value)} />
        </label>
        <button class="primary" type="submit" disabled={action.busy || !chosen}>
          {action.busy ? 'Running…' : 'Run'}
        </button>
      </form>
      <ErrorNote error={action.error} />
      {result && (
        <div class="card" aria-live="polite">
          <h2>Result</h2>
          <p>Ran in {result.stats.execution_time}.</p>
          <Json value={result.result} label="Function result" />
          <h3>Logs</h3>
          {result.logs.length ? <Json value={result.logs} label="Function logs" /> : <p>The function logged nothing.</p>}
        </div>
      )}
    </section>
  );
}
