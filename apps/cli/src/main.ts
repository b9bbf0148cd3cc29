#!/usr/bin/env node
import { runCli } from './program';

// The `tessera` binary: everything happens in runCli; only this entry point touches process.exit.
runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`Error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
