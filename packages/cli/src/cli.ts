#!/usr/bin/env node
// The `signalyard` bin: everything happens in `run`; the exit code is set, not forced, so output
// written to pipes is flushed before the process ends.
import { run } from './run.js';

for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') return; // the reader went away (`signalyard graph x | head`): stop quietly
    throw error;
  });
}

void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
