import { ConfirmAction, DataTable, ErrorNote, formatSeconds, Json, Loading, useLoad, type AppPageProps } from '../ui';

interface Service {
  _id: string;
  name: string;
  type: string;
}

interface SyncSettings {
  state?: string | boolean;
  database_name?: string;
  development_mode_enabled?: boolean;
  is_recovery_mode_disabled?: boolean;
  last_disabled?: number;
  partition?: { key?: string; type?: string };
  queryable_fields_names?: string[];
}

interface LocatedSync {
  service: Service;
  mode: 'partition' | 'flexible';
  settings: SyncSettings;
}

interface Clients {
  replicas: number;
  clients: { user_id: string; partitions: string[]; connected_at: string; replica: string }[];
  truncated: boolean;
}

interface Partitions {
  partitions: { partition: string; epoch: number; versions: number; bytes: number; compacted_until: number; client_files: number }[];
  truncated: boolean;
}

interface LogEntry {
  _id: string;
  type: string;
  started: string;
  error?: string;
  messages?: string[];
}

/** Sync per app: mode and state, connected clients, histories, recent sync errors; terminate and re-enable. */
export function SyncPage({ api, appId }: AppPageProps) {
  const located = useLoad(async (): Promise<LocatedSync | null> => {
    const services = (await api.get<Service[]>(api.app(appId, '/services'))).filter((service) => service.type.startsWith('mongodb'));
    for (const service of services) {
      const config = await api.get<{ sync?: SyncSettings; flexible_sync?: SyncSettings }>(api.app(appId, `/services/${service._id}/config`));
      if (config.flexible_sync) return { service, mode: 'flexible', settings: config.flexible_sync };
      if (config.sync) return { service, mode: 'partition', settings: config.sync };
    }
    return null;
  }, [appId]);
  const clients = useLoad(() => api.get<Clients>(api.app(appId, '/sync/clients')), [appId]);
  const partitions = useLoad(() => api.get<Partitions>(api.app(appId, '/sync/partitions')), [appId]);
  const recent = useLoad(async () => (await api.get<{ logs: LogEntry[] }>(api.app(appId, '/logs?type=SYNC_ERROR&limit=20'))).logs, [appId]);
  const sync = located.data;
  const enabled = sync ? sync.settings.state === 'enabled' || sync.settings.state === true : false;
  const member = sync?.mode === 'flexible' ? 'flexible_sync' : 'sync';

  const setState = async (state: 'enabled' | 'disabled') => {
    if (!sync) return;
    await api.request('PATCH', api.app(appId, `/services/${sync.service._id}/config`), { json: { [member]: { state } } });
    located.reload();
    clients.reload();
    partitions.reload();
  };
  const recovery = sync?.settings.is_recovery_mode_disabled ? 'Recovery mode is disabled for this app: unsynced changes on devices are discarded.' : 'Unsynced changes on devices are recovered during the reset (recovery mode).';

  return (
    <section aria-labelledby="sync-title">
      <h1 id="sync-title">Sync</h1>
      <Loading loaded={located} />
      {located.data === null && <p>This app has no sync configuration.</p>}
      {sync && (
        <div class="card">
          <dl>
            <dt>Mode</dt>
            <dd>{sync.mode === 'flexible' ? 'Flexible sync' : 'Partition-based sync'}</dd>
            <dt>State</dt>
            <dd class={enabled ? 'good' : 'bad'} data-testid="sync-state">
              {enabled ? 'enabled' : sync.settings.last_disabled ? 'terminated' : 'disabled'}
            </dd>
            <dt>Data source</dt>
            <dd>
              {sync.service.name}
              {sync.settings.database_name ? ` · database ${sync.settings.database_name}` : ''}
            </dd>
            <dt>Development mode</dt>
            <dd>{sync.settings.development_mode_enabled ? 'on' : 'off'}</dd>
            {sync.mode === 'partition' && (
              <>
                <dt>Partition key</dt>
                <dd>
                  {sync.settings.partition?.key ?? '—'} ({sync.settings.partition?.type ?? '—'})
                </dd>
              </>
            )}
            {sync.mode === 'flexible' && (
              <>
                <dt>Queryable fields</dt>
                <dd>{sync.settings.queryable_fields_names?.join(', ') || '—'}</dd>
              </>
            )}
            <dt>Last terminated</dt>
            <dd>{formatSeconds(sync.settings.last_disabled)}</dd>
          </dl>
          <div class="row actions">
            {enabled ? (
              <ConfirmAction
                label="Terminate sync"
                consequences={
                  <>
                    <p>
                      <strong>Terminating sync</strong> ends every live sync session now ({clients.data ? `${clients.data.clients.length} connected client(s)` : 'connected clients unknown'}). Devices keep their local data but cannot sync until sync is re-enabled.
                    </p>
                    <p>When sync is re-enabled, the server starts a new history and every device that synced before must do a client reset. {recovery}</p>
                  </>
                }
                onConfirm={() => setState('disabled')}
              />
            ) : (
              <ConfirmAction
                label="Re-enable sync"
                danger={false}
                consequences={
                  <>
                    <p>
                      <strong>Re-enabling sync</strong> starts a new sync history from the data in the collections. Every device that synced before the terminate gets a client reset on its next connection. {recovery}
                    </p>
                  </>
                }
                onConfirm={() => setState('enabled')}
              />
            )}
          </div>
        </div>
      )}
      <h2>Connected clients</h2>
      <ErrorNote error={clients.error} />
      {clients.data && (
        <DataTable
          caption={`${clients.data.clients.length} client(s) on ${clients.data.replicas} replica(s)${clients.data.truncated ? ' (list truncated)' : ''}`}
          columns={['User', 'Partitions / subscriptions', 'Connected since', 'Replica']}
          items={clients.data.clients}
          row={(client, index) => (
            <tr key={index}>
              <td>
                <code>{client.user_id}</code>
              </td>
              <td>{client.partitions.join(', ')}</td>
              <td>{new Date(client.connected_at).toLocaleString()}</td>
              <td>{client.replica}</td>
            </tr>
          )}
        />
      )}
      <h2>Histories</h2>
      <ErrorNote error={partitions.error} />
      {partitions.data && (
        <DataTable
          caption={`${partitions.data.partitions.length} history(ies)`}
          columns={['Partition', 'Epoch', 'Versions', 'Bytes', 'Compacted until', 'Client files']}
          items={partitions.data.partitions}
          row={(history) => (
            <tr key={`${history.partition}/${history.epoch}`}>
              <td>
                <code>{history.partition}</code>
              </td>
              <td>{history.epoch}</td>
              <td>{history.versions}</td>
              <td>{history.bytes}</td>
              <td>{history.compacted_until}</td>
              <td>{history.client_files}</td>
            </tr>
          )}
        />
      )}
      <h2>Recent sync errors and resets</h2>
      <ErrorNote error={recent.error} />
      {recent.data && (recent.data.length ? <Json value={recent.data} label="Recent sync log entries" /> : <p>No sync entries in the recent log.</p>)}
    </section>
  );
}
