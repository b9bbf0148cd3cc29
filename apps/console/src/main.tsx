// The Tessera admin console: a single page on the admin API (served by it at /console). Pages are chosen by
// the URL's fragment (#/apps/<id>/logs), so the server has one page to serve and every view has a link.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AdminApi, loadSession, type Session } from './api';
import { AppsPage } from './pages/apps';
import { DeploymentsPage } from './pages/deployments';
import { FunctionsPage } from './pages/functions';
import { LogsPage } from './pages/logs';
import { MetricsPage } from './pages/metrics';
import { RulesPage } from './pages/rules';
import { SignInPage } from './pages/sign-in';
import { SyncPage } from './pages/sync';
import { UsersPage } from './pages/users';
import { ValuesPage } from './pages/values';
import './console.css';

const appPages = [
  { path: 'logs', title: 'Logs', page: LogsPage },
  { path: 'users', title: 'Users', page: UsersPage },
  { path: 'functions', title: 'Functions', page: FunctionsPage },
  { path: 'rules', title: 'Rules', page: RulesPage },
  { path: 'sync', title: 'Sync', page: SyncPage },
  { path: 'values', title: 'Values & secrets', page: ValuesPage },
  { path: 'deployments', title: 'Deployments', page: DeploymentsPage },
  { path: 'metrics', title: 'Metrics', page: MetricsPage },
] as const;

function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function Console() {
  const [api, setApi] = useState<AdminApi | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const route = useRoute();

  const start = (session: Session) => setApi(new AdminApi(session, (reason) => end(reason)));
  const end = (reason?: string) => {
    setApi(undefined);
    setNotice(reason);
  };
  useEffect(() => {
    const session = loadSession();
    if (session) start(session);
  }, []);

  const [section, appId, pageName] = route;
  const inApp = section === 'apps' && appId !== undefined;
  const current = inApp ? (appPages.find((page) => page.path === pageName) ?? appPages[0]) : undefined;
  useTitle(!api ? 'Sign in · Tessera console' : current ? `${current.title} · ${appId} · Tessera console` : 'Apps · Tessera console');

  if (!api) {
    return (
      <SignInPage
        notice={notice}
        onSignedIn={(session) => {
          setNotice(undefined);
          start(session);
        }}
      />
    );
  }

  const Page = current?.page;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/apps">
          Tessera console
        </a>
        <span class="who">
          Signed in as <strong>{api.username}</strong>
        </span>
        <button type="button" onClick={() => void api.signOut().finally(() => end('You are signed out.'))}>
          Sign out
        </button>
      </header>
      <nav class="side" aria-label="Console">
        <ul>
          <li>
            <a href="#/apps" aria-current={!inApp ? 'page' : undefined}>
              Apps
            </a>
          </li>
        </ul>
        {inApp && (
          <>
            <h2 class="nav-app" title={appId}>
              App
            </h2>
            <ul>
              {appPages.map((page) => (
                <li key={page.path}>
                  <a href={`#/apps/${encodeURIComponent(appId)}/${page.path}`} aria-current={page === current ? 'page' : undefined}>
                    {page.title}
                  </a>
                </li>
              ))}
            </ul>
          </>
        )}
      </nav>
      <main id="main" tabIndex={-1}>
        {Page && appId ? <Page key={`${appId}/${current.path}`} api={api} appId={appId} /> : <AppsPage api={api} />}
      </main>
    </div>
  );
}

function useTitle(title: string): void {
  useEffect(() => {
    document.title = title;
  }, [title]);
}

render(<Console />, document.getElementById('root')!);
