import { useState } from 'preact/hooks';
import { ConfirmAction, DataTable, ErrorNote, Json, Loading, parseJson, useAction, useLoad, type AppPageProps } from '../ui';

interface ValueSummary {
  _id: string;
  name: string;
  private: boolean;
  from_secret: boolean;
}

interface SecretSummary {
  _id: string;
  name: string;
}

/**
 * Values and secrets. A secret's value is only ever typed into a password field and sent: the admin API
 * never answers it, and the page clears the field once it is sent.
 */
export function ValuesPage({ api, appId }: AppPageProps) {
  const values = useLoad(() => api.get<ValueSummary[]>(api.app(appId, '/values')), [appId]);
  const secrets = useLoad(() => api.get<SecretSummary[]>(api.app(appId, '/secrets')), [appId]);
  const [opened, setOpened] = useState<{ name: string; value: unknown } | undefined>();
  const open = useAction();

  return (
    <section aria-labelledby="values-title">
      <h1 id="values-title">Values &amp; secrets</h1>
      <h2>Values</h2>
      <Loading loaded={values} />
      {values.data && (
        <DataTable
          caption={`${values.data.length} value(s)`}
          columns={['Name', 'Kind', 'Actions']}
          items={values.data}
          row={(value) => (
            <tr key={value._id}>
              <th scope="row">{value.name}</th>
              <td>{value.from_secret ? 'from a secret' : 'JSON'}{value.private ? ', private' : ''}</td>
              <td class="row">
                <button type="button" onClick={() => void open.run(async () => setOpened(await api.get<{ name: string; value: unknown }>(api.app(appId, `/values/${value._id}`))))}>
                  Show {value.from_secret ? 'secret name' : 'value'}
                </button>
                <ConfirmAction label={`Delete ${value.name}`} consequences={<p>Functions reading {value.name} get undefined after the deployment this makes.</p>} onConfirm={async () => (await api.request('DELETE', api.app(appId, `/values/${value._id}`)), values.reload())} />
              </td>
            </tr>
          )}
        />
      )}
      <ErrorNote error={open.error} />
      {opened && <Json value={opened} label={`Value ${opened.name}`} />}
      <NewValue api={api} appId={appId} secrets={secrets.data ?? []} onCreated={values.reload} />
      <h2>Secrets</h2>
      <Loading loaded={secrets} />
      {secrets.data && (
        <DataTable
          caption={`${secrets.data.length} secret(s); their values are never shown`}
          columns={['Name', 'Actions']}
          items={secrets.data}
          row={(secret) => (
            <tr key={secret._id}>
              <th scope="row">{secret.name}</th>
              <td class="row">
                <SecretValueForm label={`New value for ${secret.name}`} submitLabel="Replace value" onSubmit={(value) => api.request('PUT', api.app(appId, `/secrets/${secret._id}`), { json: { name: secret.name, value } })} />
                <ConfirmAction label={`Delete ${secret.name}`} consequences={<p>Values and services that use {secret.name} stop deploying until it exists again.</p>} onConfirm={async () => (await api.request('DELETE', api.app(appId, `/secrets/${secret._id}`)), secrets.reload())} />
              </td>
            </tr>
          )}
        />
      )}
      <NewSecret api={api} appId={appId} onCreated={secrets.reload} />
    </section>
  );
}

function NewValue({ api, appId, secrets, onCreated }: { api: AppPageProps['api']; appId: string; secrets: SecretSummary[]; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [fromSecret, setFromSecret] = useState(false);
  const [text, setText] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const value = fromSecret ? text : parseJson(text, 'Value');
      await api.request('POST', api.app(appId, '/values'), { json: { name, value, from_secret: fromSecret } });
      setName('');
      setText('');
      onCreated();
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Add a value">
      <h3>Add a value</h3>
      <div class="row">
        <label>
          Name
          <input name="value-name" required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label class="inline">
          <input type="checkbox" checked={fromSecret} onChange={(event) => setFromSecret(event.currentTarget.checked)} /> From a secret
        </label>
        {fromSecret ? (
          <label>
            Secret
            <select name="value-secret" value={text} onChange={(event) => setText(event.currentTarget.value)}>
              <option value="">Choose…</option>
              {secrets.map((secret) => (
                <option key={secret._id} value={secret.name}>
                  {secret.name}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <label>
            Value (JSON)
            <input name="value-json" required value={text} onInput={(event) => setText(event.currentTarget.value)} />
          </label>
        )}
        <button type="submit" class="primary" disabled={action.busy}>
          Add value
        </button>
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}

function NewSecret({ api, appId, onCreated }: { api: AppPageProps['api']; appId: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  return (
    <div class="card">
      <h3>Add a secret</h3>
      <label>
        Secret name
        <input name="secret-name" value={name} onInput={(event) => setName(event.currentTarget.value)} />
      </label>
      <SecretValueForm
        label="Secret value"
        submitLabel="Add secret"
        onSubmit={async (value) => {
          await api.request('POST', api.app(appId, '/secrets'), { json: { name, value } });
          setName('');
          onCreated();
        }}
      />
    </div>
  );
}

/** A password field whose content is sent and then forgotten: never put in an attribute, never shown. */
function SecretValueForm({ label, submitLabel, onSubmit }: { label: string; submitLabel: string; onSubmit: (value: string) => Promise<unknown> }) {
  const action = useAction();
  const [done, setDone] = useState(false);
  const submit = (event: Event) => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).elements.namedItem('secret-value') as HTMLInputElement;
    const value = input.value;
    input.value = '';
    setDone(false);
    void action.run(async () => {
      await onSubmit(value);
      setDone(true);
    });
  };
  return (
    <form class="row" onSubmit={submit} aria-label={submitLabel}>
      <label>
        {label}
        <input name="secret-value" type="password" autoComplete="off" required />
      </label>
      <button type="submit" disabled={action.busy}>
        {submitLabel}
      </button>
      {done && <span role="status">Saved.</span>}
      <ErrorNote error={action.error} />
    </form>
  );
}
