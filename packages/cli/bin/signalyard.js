#!/usr/bin/env node
// The `signalyard` command. The program is dist/cli.js, written by the build; this small file is
// committed so the command exists as soon as the package is installed, even in a fresh clone of
// the Signalyard repository before its first `pnpm build` (pnpm links bins at install time).
import { existsSync } from 'node:fs';

const program = new URL('../dist/cli.js', import.meta.url);
if (existsSync(program)) {
  void import(program.href); // no top-level await: nothing in a published package uses it
} else {
  process.stderr.write(
    'signalyard: the command is not built yet (packages/cli/dist/cli.js is missing): run `pnpm build` in the Signalyard repository first\n',
  );
  process.exitCode = 2;
}
