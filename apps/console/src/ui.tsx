// Small shared pieces of the console's pages: loading data, showing errors and JSON, confirming actions.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { AdminApi } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads `load()` when the keys change; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, keys: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | undefined; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => current && setState({ data: undefined, error: messageOf(error), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...keys, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...state, reload };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs an action, keeping its error and whether it is running. */
export function useAction(): { busy: boolean; error: string | undefined; run: (action: () => Promise<unknown>) => Promise<boolean>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(messageOf(failure));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

export function ErrorNote({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Json({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function Loading({ loaded }: { loaded: Loaded<unknown> }) {
  if (loaded.error) return <ErrorNote error={loaded.error} />;
  if (loaded.loading && loaded.data === undefined) return <p aria-live="polite">Loading…</p>;
  return null;
}

/**
 * A destructive action in two steps: the first click states what will happen, the second does it.
 * `consequences` is read before anything is sent.
 */
export function ConfirmAction(props: { label: string; confirmLabel?: string; consequences: ComponentChildren; onConfirm: () => Promise<unknown>; danger?: boolean }) {
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const confirm = useRef<HTMLButtonElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  // Focus moves to the confirming button, and back to the action's button when the question closes.
  useEffect(() => {
    if (asking) confirm.current?.focus();
    else if (asked.current) trigger.current?.focus();
    asked.current = asking;
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" ref={trigger} class={props.danger === false ? '' : 'danger'} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <div class="confirm" role="group" aria-label={`Confirm: ${props.label}`}>
      <div class="consequences">{props.consequences}</div>
      <div class="row">
        <button
          type="button"
          class={props.danger === false ? 'primary' : 'danger'}
          disabled={action.busy}
          ref={confirm}
          onClick={() => void action.run(props.onConfirm).then((done) => done && setAsking(false))}
        >
          {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
        </button>
        <button type="button" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
      <ErrorNote error={action.error} />
    </div>
  );
}

export function formatSeconds(seconds: number | undefined): string {
  return seconds ? new Date(seconds * 1000).toLocaleString() : '—';
}

/** What every page of one app receives. */
export interface AppPageProps {
  api: AdminApi;
  appId: string;
}

/** Parses a JSON text field, naming the field in the error. */
export function parseJson(text: string, field: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${field} is not valid JSON: ${messageOf(error)}`);
  }
}

/** A field of an API answer as text: strings as they are, anything else as JSON, nothing as ''. */
export function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A table of `items` with a caption and column headings; `row` draws one item's cells. */
export function DataTable<T>({ caption, columns, items, row, label }: { caption?: ComponentChildren; columns: string[]; items: T[]; row: (item: T, index: number) => ComponentChildren; label?: string }) {
  return (
    <table aria-label={label}>
      {caption !== undefined && <caption>{caption}</caption>}
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{items.map(row)}</tbody>
    </table>
  );
}

/** A user id typed or picked from the app's users (a datalist of ids, each with its email or provider). */
export function UserIdField({ id, value, onInput, users }: { id: string; value: string; onInput: (value: string) => void; users: { _id: string; data: Record<string, unknown>; identities: { provider_type: string }[] }[] }) {
  return (
    <label>
      User id
      <input name="user-id" list={id} value={value} onInput={(event) => onInput(event.currentTarget.value)} />
      <datalist id={id}>
        {users.map((user) => (
          <option key={user._id} value={user._id}>
            {text(user.data['email'] ?? user.identities[0]?.provider_type)}
          </option>
        ))}
      </datalist>
    </label>
  );
}
