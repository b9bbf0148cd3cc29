import { useState } from 'preact/hooks';
import { ErrorNote, Json, Loading, parseJson, useAction, useLoad, UserIdField, type AppPageProps } from '../ui';
import type { AppUser } from './users';

interface Service {
  _id: string;
  name: string;
  type: string;
}

interface Rule {
  _id: string;
  database: string;
  collection: string;
}

interface Explained {
  operation: string;
  allowed: boolean;
  role: string | null;
  document?: Record<string, unknown> | null;
  error?: { error: string; error_code: string };
  trace?: { role: string | null; roleSource?: string; decidedBy?: string; reason?: string; withheldFields: string[]; evaluations: unknown[] };
}

const operations = ['read', 'insert', 'update', 'delete', 'sync_read', 'sync_write'] as const;

/** A collection's rules and the explain endpoint as a form: which role applied, which expression decided, which fields were withheld. */
export function RulesPage({ api, appId }: AppPageProps) {
  const namespaces = useLoad(async () => {
    const services = (await api.get<Service[]>(api.app(appId, '/services'))).filter((service) => service.type.startsWith('mongodb'));
    const lists = await Promise.all(services.map(async (service) => (await api.get<Rule[]>(api.app(appId, `/services/${service._id}/rules`))).map((rule) => ({ service, rule }))));
    return lists.flat();
  }, [appId]);
  const users = useLoad(() => api.get<AppUser[]>(api.app(appId, '/users')), [appId]);
  const [namespace, setNamespace] = useState('');
  const [userId, setUserId] = useState('');
  const [operation, setOperation] = useState<(typeof operations)[number]>('read');
  const [documentText, setDocumentText] = useState('{}');
  const [partitionText, setPartitionText] = useState('""');
  const sync = operation.startsWith('sync_');
  const [answer, setAnswer] = useState<Explained | undefined>();
  const action = useAction();
  const chosen = namespaces.data?.find((entry) => entry.rule._id === namespace) ?? namespaces.data?.[0];
  const rule = useLoad(() => (chosen ? api.get<unknown>(api.app(appId, `/services/${chosen.service._id}/rules/${chosen.rule._id}`)) : Promise.resolve(undefined)), [appId, chosen?.rule._id]);

  const submit = (event: Event) => {
    event.preventDefault();
    setAnswer(undefined);
    void action.run(async () => {
      if (!chosen && !sync) throw new Error('The app has no collection rules to explain');
      const id = userId.trim();
      if (!id) throw new Error('Choose or type a user id');
      const known = users.data?.find((user) => user._id === id);
      const user = known ? { id, type: known.type, data: known.data, identities: known.identities } : { id };
      const body = sync
        ? { user, operation, partition: parseJson(partitionText, 'Partition value') ?? null }
        : { user, operation, document: parseJson(documentText, 'Document') ?? {}, namespace: { service: chosen!.service.name, database: chosen!.rule.database, collection: chosen!.rule.collection } };
      setAnswer(await api.request<Explained>('POST', api.app(appId, '/rules/evaluate'), { json: body }));
    });
  };

  return (
    <section aria-labelledby="rules-title">
      <h1 id="rules-title">Rules</h1>
      <Loading loaded={namespaces} />
      {namespaces.data?.length === 0 && <p>The app has no collection rules.</p>}
      <form class="card" onSubmit={submit} aria-label="Explain a rule decision">
        <h2>Explain a decision</h2>
        <div class="row">
          <label>
            Collection
            <select name="namespace" value={chosen?.rule._id ?? ''} onChange={(event) => setNamespace(event.currentTarget.value)}>
              {(namespaces.data ?? []).map(({ service, rule: entry }) => (
                <option key={entry._id} value={entry._id}>
                  {service.name}: {entry.database}.{entry.collection}
                </option>
              ))}
            </select>
          </label>
          <UserIdField id="rules-users" value={userId} onInput={setUserId} users={users.data ?? []} />
          <label>
            Operation
            <select name="operation" value={operation} onChange={(event) => setOperation(event.currentTarget.value as (typeof operations)[number])}>
              {operations.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </label>
        </div>
        {sync ? (
          <label>
            Partition value (JSON, as the client binds it; partition-based sync)
            <input name="partition" value={partitionText} onInput={(event) => setPartitionText(event.currentTarget.value)} />
          </label>
        ) : (
          <label>
            Document (JSON)
            <textarea name="document" rows={5} spellcheck={false} value={documentText} onInput={(event) => setDocumentText(event.currentTarget.value)} />
          </label>
        )}
        <button class="primary" type="submit" disabled={action.busy}>
          Explain
        </button>
      </form>
      <ErrorNote error={action.error} />
      {answer && (
        <div class="card" aria-live="polite" aria-label="Decision">
          <h2 class={answer.allowed ? 'good' : 'bad'}>{answer.allowed ? 'Allowed' : 'Refused'}</h2>
          <dl>
            <dt>Role applied</dt>
            <dd>{answer.role ?? 'none'}</dd>
            <dt>Decided by</dt>
            <dd>
              <code>{answer.trace?.decidedBy ?? '—'}</code>
            </dd>
            <dt>Reason</dt>
            <dd>{answer.trace?.reason ?? answer.error?.error ?? '—'}</dd>
            <dt>Withheld fields</dt>
            <dd>{answer.trace?.withheldFields.length ? answer.trace.withheldFields.join(', ') : 'none'}</dd>
          </dl>
          {answer.document !== undefined && (
            <>
              <h3>What the user sees</h3>
              <Json value={answer.document} label="Visible document" />
            </>
          )}
          <details>
            <summary>Every expression evaluated</summary>
            <Json value={answer.trace?.evaluations ?? []} label="Evaluations" />
          </details>
        </div>
      )}
      {chosen && rule.data !== undefined && (
        <details class="card">
          <summary>
            The rules of {chosen.rule.database}.{chosen.rule.collection}
          </summary>
          <Json value={rule.data} label="Collection rules" />
        </details>
      )}
    </section>
  );
}
