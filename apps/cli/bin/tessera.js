#!/usr/bin/env node
// The `tessera` command as npm links it (`npx tessera`). It is committed, not built, so that `npm install`
// links it on a fresh clone before the first build; it only loads the CLI built into dist/ (tsc writes
// dist/main.js, which npm would skip linking when it is absent), or says how to build it.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const main = join(__dirname, '..', 'dist', 'main.js');
if (!existsSync(main)) {
  process.stderr.write('tessera: the CLI is not built yet. Run `npm run build` (or `npm start`) at the repository root, then run this again.\n');
  process.exitCode = 1;
} else {
  require(main);
}
