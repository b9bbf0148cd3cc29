import { spawn } from 'node:child_process';
import { zipSync } from 'fflate';

/** An app directory as path -> text or bytes. */
export type DirectoryFiles = Record<string, string | Uint8Array>;

export function zipDirectory(files: DirectoryFiles): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(files).map(([path, content]) => [path, typeof content === 'string' ? Buffer.from(content) : content])));
}

export interface CurlResult {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * curl as a subprocess, as a user or a browser-less client sends it: `--path-as-is` so `..` segments reach
 * the server unresolved, the response headers parsed from `-D -`.
 */
export function curl(args: string[]): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-s', '--path-as-is', '-D', '-', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`curl exited with ${code}`));
      const raw = Buffer.concat(chunks).toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, body: raw.slice(end + 4) });
    });
  });
}

/** realm-cli's upload body: multipart/mixed with the asset metadata (`meta`) and the file (`file`). */
export function multipartUpload(meta: unknown, file: Uint8Array): { contentType: string; body: Uint8Array<ArrayBuffer> } {
  const boundary = `tessera${Math.random().toString(16).slice(2)}`;
  const body = new Uint8Array(Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\n\r\n${JSON.stringify(meta)}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\n`),
    Buffer.from(file),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]));
  return { contentType: `multipart/mixed; boundary=${boundary}`, body };
}
