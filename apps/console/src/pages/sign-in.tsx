import { useState } from 'preact/hooks';
import { signIn, type AuthType, type Session } from '../api';
import { ErrorNote, useAction } from '../ui';

/** Sign-in with the admin user's password or an admin API key pair (public key and private key). */
export function SignInPage({ onSignedIn, notice }: { onSignedIn: (session: Session) => void; notice: string | undefined }) {
  const [authType, setAuthType] = useState<AuthType>('local');
  const [username, setUsername] = useState('');
  const [secret, setSecret] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const session = await signIn(authType, username, secret);
      setSecret('');
      onSignedIn(session);
    });
  };
  const local = authType === 'local';
  return (
    <main class="sign-in" id="main">
      <h1>Tessera console</h1>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit} aria-label="Sign in">
        <fieldset>
          <legend>Sign in with</legend>
          <label class="inline">
            <input type="radio" name="auth" checked={local} onChange={() => setAuthType('local')} /> Admin user
          </label>
          <label class="inline">
            <input type="radio" name="auth" checked={!local} onChange={() => setAuthType('api-key')} /> Admin API key
          </label>
        </fieldset>
        <label>
          {local ? 'Username' : 'Public API key'}
          <input name="username" autoComplete="username" required value={username} onInput={(event) => setUsername(event.currentTarget.value)} />
        </label>
        <label>
          {local ? 'Password' : 'Private API key'}
          <input name="secret" type="password" autoComplete={local ? 'current-password' : 'off'} required value={secret} onInput={(event) => setSecret(event.currentTarget.value)} />
        </label>
        <button class="primary" type="submit" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorNote error={action.error} />
      </form>
    </main>
  );
}
