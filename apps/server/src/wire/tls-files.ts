import { readFileSync } from 'node:fs';
import type { TlsFiles } from '@tessera/settings';

/** The PEM contents of a listener's configured certificate and key (read once at start). */
export function readTlsFiles(files: TlsFiles | undefined): { cert: Buffer; key: Buffer } | undefined {
  return files ? { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) } : undefined;
}
