import { useState } from 'preact/hooks';
import { ConfirmAction, DataTable, ErrorNote, formatSeconds, Loading, useAction, useLoad, type AppPageProps } from '../ui';

interface Deployment {
  _id: string;
  name: string;
  version: number;
  user_id: string;
  deployed_at: number;
  origin: string;
  status: string;
}

interface Draft {
  _id: string;
}

/** Export and import (a directory zip, its diff shown before it is deployed), the deployment history and the draft's diff. */
export function DeploymentsPage({ api, appId }: AppPageProps) {
  const deployments = useLoad(() => api.get<Deployment[]>(api.app(appId, '/deployments')), [appId]);
  const drafts = useLoad(() => api.get<Draft[]>(api.app(appId, '/drafts')), [appId]);
  const draft = drafts.data?.[0];
  const draftDiff = useLoad(() => (draft ? api.get<{ diffs: string[] }>(api.app(appId, `/drafts/${draft._id}/diff`)) : Promise.resolve(undefined)), [appId, draft?._id]);
  const download = useAction();
  const upload = useAction();
  const [zip, setZip] = useState<File | undefined>();
  const [importDiff, setImportDiff] = useState<string[] | undefined>();
  const [imported, setImported] = useState<'deployed' | 'drafted' | false>(false);
  const starting = useAction();

  const exportZip = () =>
    void download.run(async () => {
      const blob = await api.request<Blob>('GET', api.app(appId, '/export'), { binary: true });
      const link = document.createElement('a');
      link.href = URL.createObjectURL(blob);
      link.download = `${appId}.zip`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    });

  const preview = (file: File | undefined) => {
    setZip(file);
    setImportDiff(undefined);
    setImported(false);
    if (file) void upload.run(async () => setImportDiff(await api.request<string[]>('POST', api.app(appId, '/import?diff=true'), { body: await file.arrayBuffer(), contentType: 'application/zip' })));
  };

  return (
    <section aria-labelledby="deployments-title">
      <h1 id="deployments-title">Deployments</h1>
      <div class="card">
        <h2>Export</h2>
        <button type="button" onClick={exportZip} disabled={download.busy}>
          Download the app as a zip
        </button>
        <ErrorNote error={download.error} />
      </div>
      <div class="card">
        <h2>Import</h2>
        <label>
          App directory as a zip
          <input type="file" accept=".zip,application/zip" onChange={(event) => preview(event.currentTarget.files?.[0])} />
        </label>
        <ErrorNote error={upload.error} />
        {importDiff && (
          <>
            <h3>What the import changes</h3>
            {importDiff.length ? <Diff lines={importDiff} label="Import diff" /> : <p>Nothing changes.</p>}
            {zip && !imported && (
              <ConfirmAction
                label={draft ? 'Import into the draft' : 'Import and deploy'}
                danger={false}
                consequences={
                  draft ? <p>The draft's configuration is replaced by the zip's; nothing goes live until the draft is deployed.</p> : <p>The app's configuration is replaced by the zip's and deployed at once.</p>
                }
                onConfirm={async () => {
                  // With a draft open, the admin API stages the import in it (as realm-cli's push).
                  const into = draft ? 'drafted' : 'deployed';
                  await api.request('POST', api.app(appId, '/import'), { body: await zip.arrayBuffer(), contentType: 'application/zip' });
                  setImported(into);
                  deployments.reload();
                  draftDiff.reload();
                }}
              />
            )}
            {imported === 'deployed' && <p role="status">Imported and deployed.</p>}
            {imported === 'drafted' && <p role="status">Imported into the draft: read its diff below, then deploy it.</p>}
          </>
        )}
      </div>
      {drafts.data && !draft && (
        <div class="card">
          <h2>Draft</h2>
          <p>No draft is open: an import deploys at once. With a draft, imports are staged in it and go live together when it is deployed, after its diff.</p>
          <button type="button" disabled={starting.busy} onClick={() => void starting.run(async () => (await api.request('POST', api.app(appId, '/drafts')), drafts.reload()))}>
            Start a draft
          </button>
          <ErrorNote error={starting.error} />
        </div>
      )}
      {draft && (
        <div class="card">
          <h2>Draft</h2>
          <Loading loaded={draftDiff} />
          {draftDiff.data && (draftDiff.data.diffs.length ? <Diff lines={draftDiff.data.diffs} label="Draft diff" /> : <p>The draft changes nothing yet.</p>)}
          <div class="row">
            <ConfirmAction
              label="Deploy the draft"
              danger={false}
              consequences={<p>The changes above go live now, for every client, as one new deployment.</p>}
              onConfirm={async () => (await api.request('POST', api.app(appId, `/drafts/${draft._id}/deployment`)), setImported(false), drafts.reload(), deployments.reload())}
            />
            <ConfirmAction label="Discard the draft" consequences={<p>The draft's changes are dropped; nothing is deployed.</p>} onConfirm={async () => (await api.request('DELETE', api.app(appId, `/drafts/${draft._id}`)), drafts.reload())} />
          </div>
        </div>
      )}
      <h2>History</h2>
      <Loading loaded={deployments} />
      {deployments.data && (
        <DataTable
          caption={`${deployments.data.length} deployment(s)`}
          columns={['Version', 'Deployed', 'Origin', 'Status', 'By']}
          items={deployments.data}
          row={(deployment) => (
            <tr key={deployment._id}>
              <td>{deployment.version}</td>
              <td>{formatSeconds(deployment.deployed_at)}</td>
              <td>{deployment.origin}</td>
              <td>{deployment.status}</td>
              <td>
                <code>{deployment.user_id}</code>
              </td>
            </tr>
          )}
        />
      )}
    </section>
  );
}

/** The server's diff text, one change per entry, each line marked by its first character (+ added, - removed). */
function Diff({ lines, label }: { lines: string[]; label: string }) {
  return (
    <pre class="json diff" aria-label={label} tabIndex={0}>
      {lines
        .join('\n')
        .split('\n')
        .map((line, index) => (
          <span key={index} class={line.startsWith('+') ? 'added' : line.startsWith('-') ? 'removed' : ''}>
            {line}
            {'\n'}
          </span>
        ))}
    </pre>
  );
}
