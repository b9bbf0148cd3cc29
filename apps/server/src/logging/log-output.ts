/**
 * Where a Tessera process writes its log and its start banner: stdout. JSON lines (one per event) when
 * stdout is a pipe or a file, as log collectors expect; pino-pretty's readable lines when it is a terminal.
 * The banner goes through the same destination, so it lands after every line logged before it. It must not
 * decide levels or what is logged: the host logger and the settings do.
 */
import { destination, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';

export interface LogOutput {
  /** The stream pino writes log lines to. */
  readonly stream: DestinationStream;
  /** Writes plain text (the start banner) after every line logged so far. */
  print(text: string): void;
}

export function createLogOutput(options: { pretty: boolean }): LogOutput {
  // pino's own asynchronous stdout writer; pino flushes it when the process exits.
  const stdout = destination({ dest: 1, sync: false });
  if (!options.pretty) return { stream: stdout, print: (text) => void stdout.write(text) };
  // pino-pretty formats each line in this thread rather than in its worker-thread transport: a worker writes
  // on its own schedule, and the banner would land among the start-up lines instead of after them.
  const pretty = prettyFactory({
    ignore: 'pid,hostname,service,version,context',
    translateTime: 'SYS:HH:MM:ss.l',
    messageFormat: '{if context}[{context}] {end}{msg}',
  });
  return {
    stream: { write: (line: string) => void stdout.write(pretty(line)) },
    print: (text) => void stdout.write(text),
  };
}
