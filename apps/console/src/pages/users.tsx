import { useState } from 'preact/hooks';
import { ConfirmAction, DataTable, formatSeconds, Json, Loading, text, useLoad, type AppPageProps } from '../ui';

export interface AppUser {
  _id: string;
  type: string;
  disabled: boolean;
  identities: { id: string; provider_type: string; provider_id?: string; provider_data?: Record<string, unknown> }[];
  data: Record<string, unknown>;
  creation_date: number;
  last_authentication_date: number;
}

interface UserSession {
  _id: string;
  device_id: string;
  created: number;
  last_used: number;
  expires: number;
}

interface CustomData {
  enabled: boolean;
  namespace?: string;
  user_id_field?: string;
  document: unknown;
}

interface PendingUser {
  _id: string;
  login_ids: { id_type: string; id: string }[];
  user_id: string;
}

function matches(user: AppUser, search: string): boolean {
  if (!search) return true;
  const needle = search.toLowerCase();
  return (
    user._id.toLowerCase().includes(needle) ||
    text(user.data['email']).toLowerCase().includes(needle) ||
    user.identities.some((identity) => identity.provider_type.toLowerCase().includes(needle) || identity.id.toLowerCase().includes(needle))
  );
}

/** The app's users: search by id, email or provider; one user's identities, data, custom data and sessions; disable, enable, revoke sessions, delete; pending registrations. */
export function UsersPage({ api, appId }: AppPageProps) {
  const [status, setStatus] = useState('');
  const users = useLoad(() => api.get<AppUser[]>(api.app(appId, `/users${status ? `?status=${status}` : ''}`)), [appId, status]);
  const pending = useLoad(() => api.get<PendingUser[]>(api.app(appId, '/user_registrations/pending_users')), [appId]);
  const [search, setSearch] = useState('');
  const [selectedId, setSelectedId] = useState<string | undefined>();
  const shown = (users.data ?? []).filter((user) => matches(user, search.trim()));
  const selected = users.data?.find((user) => user._id === selectedId);

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <div class="card filters" role="search">
        <label>
          Search by id, email or provider
          <input type="search" name="user-search" value={search} onInput={(event) => setSearch(event.currentTarget.value)} />
        </label>
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
            <option value="">All</option>
            <option value="enabled">Enabled</option>
            <option value="disabled">Disabled</option>
          </select>
        </label>
      </div>
      <Loading loaded={users} />
      <div class="split">
        <DataTable
          caption={`${shown.length} user(s)`}
          columns={['User id', 'Email / name', 'Providers', 'State']}
          items={shown}
          row={(user) => (
            <tr key={user._id} class={user._id === selectedId ? 'selected' : ''}>
              <td>
                <button type="button" class="link" aria-pressed={user._id === selectedId} onClick={() => setSelectedId(user._id)}>
                  {user._id}
                </button>
              </td>
              <td>{text(user.data['email'] ?? user.data['name'])}</td>
              <td>{[...new Set(user.identities.map((identity) => identity.provider_type))].join(', ')}</td>
              <td class={user.disabled ? 'bad' : 'good'}>{user.disabled ? 'disabled' : 'enabled'}</td>
            </tr>
          )}
        />
        {selected && (
          <aside class="card record" aria-label="User">
            <h2>User {selected._id}</h2>
            <dl>
              <dt>State</dt>
              <dd>{selected.disabled ? 'disabled' : 'enabled'}</dd>
              <dt>Type</dt>
              <dd>{selected.type}</dd>
              <dt>Created</dt>
              <dd>{formatSeconds(selected.creation_date)}</dd>
              <dt>Last sign-in</dt>
              <dd>{formatSeconds(selected.last_authentication_date)}</dd>
            </dl>
            <div class="row actions">
              {selected.disabled ? (
                <ConfirmAction label="Enable user" danger={false} consequences={<p>The user can sign in again.</p>} onConfirm={async () => (await api.request('PUT', api.app(appId, `/users/${selected._id}/enable`)), users.reload())} />
              ) : (
                <ConfirmAction
                  label="Disable user"
                  consequences={<p>Their next request is refused, their live sync connections close, and they cannot sign in until enabled again.</p>}
                  onConfirm={async () => (await api.request('PUT', api.app(appId, `/users/${selected._id}/disable`)), users.reload())}
                />
              )}

              <ConfirmAction
                label="Delete user"
                consequences={<p>The user and their identities are deleted; their sessions end. Their data in collections is not touched. This cannot be undone.</p>}
                onConfirm={async () => {
                  await api.request('DELETE', api.app(appId, `/users/${selected._id}`));
                  setSelectedId(undefined);
                  users.reload();
                }}
              />
            </div>
            <h3>Identities</h3>
            <Json value={selected.identities} label="Identities" />
            <h3>User data</h3>
            <Json value={selected.data} label="User data" />
            <UserSessions key={`sessions-${selected._id}`} api={api} appId={appId} userId={selected._id} />
            <UserCustomData key={`custom-${selected._id}`} api={api} appId={appId} userId={selected._id} />
          </aside>
        )}
      </div>
      <h2>Pending registrations</h2>
      <Loading loaded={pending} />
      {pending.data && pending.data.length === 0 && <p>No registration is waiting for confirmation.</p>}
      {pending.data && pending.data.length > 0 && (
        <DataTable
          columns={['Email', 'Actions']}
          items={pending.data}
          row={(entry) => {
            const email = entry.login_ids.find((login) => login.id_type === 'email')?.id ?? entry._id;
            return (
              <tr key={entry._id}>
                <td>{email}</td>
                <td class="row">
                  <ConfirmAction
                    label={`Confirm ${email}`}
                    danger={false}
                    consequences={<p>The account is confirmed without the email link: it can sign in.</p>}
                    onConfirm={async () => (await api.request('POST', api.app(appId, `/user_registrations/by_email/${encodeURIComponent(email)}/confirm`)), pending.reload(), users.reload())}
                  />
                  <ConfirmAction
                    label={`Delete ${email}`}
                    consequences={<p>The registration is removed; the address may register again.</p>}
                    onConfirm={async () => (await api.request('DELETE', api.app(appId, `/user_registrations/by_email/${encodeURIComponent(email)}`)), pending.reload())}
                  />
                </td>
              </tr>
            );
          }}
        />
      )}
    </section>
  );
}

/** The user's refresh-token sessions (one per sign-in that has not ended), each revocable, or all at once. */
function UserSessions({ api, appId, userId }: AppPageProps & { userId: string }) {
  const sessions = useLoad(() => api.get<UserSession[]>(api.app(appId, `/users/${userId}/sessions`)), [appId, userId]);
  return (
    <>
      <h3>Sessions</h3>
      <Loading loaded={sessions} />
      {sessions.data && sessions.data.length === 0 && <p>No session: the user is signed in nowhere.</p>}
      {sessions.data && sessions.data.length > 0 && (
        <>
          <p id={`sessions-${userId}`}>{sessions.data.length} session(s), newest first</p>
          <ol class="sessions" aria-labelledby={`sessions-${userId}`}>
            {sessions.data.map((session, index) => (
              <li key={session._id}>
                <dl>
                  <dt>Signed in</dt>
                  <dd>{formatSeconds(session.created)}</dd>
                  <dt>Last used</dt>
                  <dd>{formatSeconds(session.last_used)}</dd>
                  <dt>Ends</dt>
                  <dd>{formatSeconds(session.expires)}</dd>
                  <dt>Device</dt>
                  <dd>
                    <code>{session.device_id}</code>
                  </dd>
                </dl>
                <ConfirmAction
                  label={`Revoke session ${index + 1}`}
                  consequences={<p>This session's refresh token and its access tokens stop working: that device must sign in again. Other sessions stay.</p>}
                  onConfirm={async () => (await api.request('DELETE', api.app(appId, `/users/${userId}/sessions/${session._id}`)), sessions.reload())}
                />
              </li>
            ))}
          </ol>
          <div class="row actions">
            <ConfirmAction
              label="Revoke all sessions"
              consequences={<p>Every refresh token of this user is revoked: all their devices must sign in again, and their live sync connections close. The user stays enabled.</p>}
              onConfirm={async () => (await api.request('PUT', api.app(appId, `/users/${userId}/logout`)), sessions.reload())}
            />
          </div>
        </>
      )}
    </>
  );
}

/** The user's custom data document, as the client API reads it into their access tokens. */
function UserCustomData({ api, appId, userId }: AppPageProps & { userId: string }) {
  const custom = useLoad(() => api.get<CustomData>(api.app(appId, `/users/${userId}/custom_data`)), [appId, userId]);
  return (
    <>
      <h3>Custom data</h3>
      <Loading loaded={custom} />
      {custom.data && !custom.data.enabled && <p>The app reads no custom user data (custom_user_data_config is off).</p>}
      {custom.data?.enabled && custom.data.document === null && (
        <p>
          No document in <code>{custom.data.namespace}</code> has <code>{custom.data.user_id_field}</code> equal to this user's id.
        </p>
      )}
      {custom.data?.enabled && custom.data.document !== null && (
        <>
          <p>
            From <code>{custom.data.namespace}</code>:
          </p>
          <Json value={custom.data.document} label="Custom data" />
        </>
      )}
    </>
  );
}
