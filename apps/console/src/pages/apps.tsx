import { useState } from 'preact/hooks';
import type { AdminApi } from '../api';
import { ConfirmAction, DataTable, ErrorNote, formatSeconds, Loading, useAction, useLoad } from '../ui';

interface AppRecord {
  _id: string;
  client_app_id: string;
  name: string;
  template_id?: string;
  last_modified: number;
}

interface Template {
  id: string;
  name: string;
  description: string;
}

/** The group's apps: list, create (empty or from a template), delete. */
export function AppsPage({ api }: { api: AdminApi }) {
  const apps = useLoad(() => api.get<AppRecord[]>(`/groups/${api.groupId}/apps`), []);
  const templates = useLoad(() => api.get<Template[]>('/templates'), []);
  const [name, setName] = useState('');
  const [templateId, setTemplateId] = useState('');
  const create = useAction();
  const [created, setCreated] = useState<string | undefined>();

  const submit = (event: Event) => {
    event.preventDefault();
    void create.run(async () => {
      const app = await api.request<AppRecord>('POST', `/groups/${api.groupId}/apps`, { json: { name, ...(templateId ? { template_id: templateId } : {}) } });
      setCreated(`Created ${app.name} (${app.client_app_id}).`);
      setName('');
      apps.reload();
    });
  };

  return (
    <section aria-labelledby="apps-title">
      <h1 id="apps-title">Apps</h1>
      <form class="card" onSubmit={submit} aria-label="Create an app">
        <h2>Create an app</h2>
        <div class="row">
          <label>
            Name
            <input name="name" required pattern="[A-Za-z0-9_\-]{1,32}" title="1 to 32 letters, digits, _ or -" value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </label>
          <label>
            Template
            <select name="template" value={templateId} onChange={(event) => setTemplateId(event.currentTarget.value)}>
              <option value="">Empty app</option>
              {(templates.data ?? []).map((template) => (
                <option key={template.id} value={template.id}>
                  {template.name} ({template.id})
                </option>
              ))}
            </select>
          </label>
          <button class="primary" type="submit" disabled={create.busy}>
            Create app
          </button>
        </div>
        <ErrorNote error={create.error} />
        {created && <p role="status">{created}</p>}
      </form>
      <Loading loaded={apps} />
      {apps.data && (
        <DataTable
          caption={`${apps.data.length} app(s)`}
          columns={['Name', 'Client app id', 'Template', 'Last modified', 'Actions']}
          items={apps.data}
          row={(app) => (
            <tr key={app._id}>
              <th scope="row">
                <a href={`#/apps/${app._id}/logs`}>{app.name}</a>
              </th>
              <td>
                <code>{app.client_app_id}</code>
              </td>
              <td>{app.template_id ?? '—'}</td>
              <td>{formatSeconds(app.last_modified)}</td>
              <td>
                <ConfirmAction
                  label={`Delete ${app.name}`}
                  consequences={
                    <p>
                      Deleting <strong>{app.name}</strong> removes the app with its configuration and deployments and drops its sync history; clients using <code>{app.client_app_id}</code> can no longer reach it. This cannot be undone.
                    </p>
                  }
                  onConfirm={async () => {
                    await api.request('DELETE', api.app(app._id));
                    apps.reload();
                  }}
                />
              </td>
            </tr>
          )}
        />
      )}
    </section>
  );
}
