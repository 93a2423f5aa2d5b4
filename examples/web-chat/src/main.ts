// `pnpm --filter @signalyard-examples/web-chat start`: the support desk in a browser.
// Options: --port N (default 4320), --db PATH (default .data/web-chat.db; ':memory:' for none).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultModel, deskRunner } from './desk.js';
import { startWebChat } from './server.js';

const args = process.argv.slice(2);
const { values } = parseArgs({
  args: args[0] === '--' ? args.slice(1) : args, // `pnpm start -- --port 8080` passes the `--` on
  options: { port: { type: 'string', default: '4320' }, db: { type: 'string', default: '.data/web-chat.db' } },
});
if (values.db !== ':memory:') mkdirSync(dirname(values.db), { recursive: true });
const { model, name } = defaultModel();
const runner = deskRunner({ dbPath: values.db, model });
const chat = await startWebChat({ runner, port: Number(values.port) });
console.log(`Signalyard web chat: ${chat.url}`);
console.log(`  reviewer ${chat.reviewUrl}   (approves or denies refunds over $100; keep it to yourself)`);
console.log(`  model    ${name}`);
console.log(`  sessions ${values.db}`);
console.log('  try      "my invoice charged me twice", then "please refund $420"   (Ctrl-C to stop)');

const stop = (): void => {
  void chat.close().then(() => runner.close());
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
