/**
 * The host side of the sandbox's `zlib`: one synchronous compression or decompression of base64 text, its
 * output capped (a small input can inflate to gigabytes), errors as plain messages. Runs on the host, so it
 * takes and gives only strings and never evaluates anything.
 */
import * as zlib from 'node:zlib';

const OPERATIONS: Record<string, (input: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions) => Buffer> = {
  deflateSync: zlib.deflateSync,
  inflateSync: zlib.inflateSync,
  deflateRawSync: zlib.deflateRawSync,
  inflateRawSync: zlib.inflateRawSync,
  gzipSync: zlib.gzipSync,
  gunzipSync: zlib.gunzipSync,
  unzipSync: zlib.unzipSync,
  brotliCompressSync: zlib.brotliCompressSync,
  brotliDecompressSync: zlib.brotliDecompressSync,
};

export function hostZlib(op: string, inputBase64: string, maxOutputBytes: number): string {
  const run = Object.prototype.hasOwnProperty.call(OPERATIONS, String(op)) ? OPERATIONS[String(op)] : undefined;
  if (!run) throw new Error(`zlib.${String(op)} is not supported`);
  try {
    return run(Buffer.from(String(inputBase64), 'base64'), { maxOutputLength: maxOutputBytes }).toString('base64');
  } catch (error) {
    if (error instanceof RangeError) throw new Error(`zlib output is larger than ${maxOutputBytes} bytes`);
    throw new Error(error instanceof Error ? error.message : String(error));
  }
}
