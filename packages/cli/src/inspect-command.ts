import { resolve } from 'node:path';
import { onAbort } from '@signalyard/core/internal';
import { Option, type Command } from 'commander';
import type { CommandContext } from './command-context.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { inboxStoreError, type OpenedInbox } from './inbox-command.js';
import { inspectedInbox } from './inspect-inbox.js';
import { openStore, storeError } from './open-store.js';
import { readTextFile } from './read-input.js';
import { STORES_HELP, integerParser, storeOptionsOf, withStoreOptions, type StoreFlags } from './sessions-command.js';

/** What `inspect` waits on: the caller's abort signal, else Ctrl-C / SIGTERM of the process. */
function untilStopped(abortSignal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (abortSignal !== undefined) {
      if (abortSignal.aborted) resolve();
      else onAbort(abortSignal, resolve);
      return;
    }
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

type InspectFlags = StoreFlags & { port: number; host: string; inbox?: boolean; inboxTable?: string; replay?: string };

/**
 * `signalyard inspect --store <url> [--port] [--host]`: the inspector page over a store, offline
 * and read-only, until the process is stopped (or `abortSignal` fires).
 */
export function addInspectCommand(program: Command, ctx: CommandContext, abortSignal: AbortSignal | undefined): void {
  withStoreOptions(program.command('inspect'))
    .description("open the inspector page over a store's sessions and their versions (offline, read-only)")
    .addOption(
      new Option('--port <port>', 'the port to listen on (0: any free port)')
        .argParser(integerParser(0, 'a port'))
        .default(4319),
    )
    .option('--host <address>', 'the address to listen on', '127.0.0.1')
    .option(
      '--inbox',
      "show the workers' durable inbox (refused when the database has none); without it, an inbox under the default name is shown when there is one",
    )
    .option('--inbox-table <name>', 'PostgreSQL, with --inbox: the inbox entries table (default: signalyard_inbox)')
    .option(
      '--replay <file>',
      'also open a replay report (the JSON of `signalyard replay --json`): two runs of each session side by side',
    )
    .addHelpText(
      'after',
      `${STORES_HELP}

Prints the page's address (with its token) and serves it until Ctrl-C. The page lists the
sessions in the store, each session's versions with their cause (signal, tier, route, status,
approvals), the chat of any version, and the agents' diagrams; nothing can be changed from it.
When the same database also holds the workers' durable inbox under its default name (an
SQLite file's inbox tables, PostgreSQL's signalyard_inbox), the page shows it too: each
session's entries waiting, the leases and the dead letters. It is looked for without writing:
nothing is created in a database without one. --inbox requires it (a database without one is
an error); with --inbox-table, PostgreSQL's inbox under another table name.
With --replay it opens a replay report at #replay: each session's recorded and replayed runs
side by side, turn by turn, the first divergence highlighted (the file is read again on every
reload, so a new \`signalyard replay --json > report.json\` shows at once).

Examples:
  signalyard inspect --store sqlite:sessions.db
  signalyard inspect --store $DATABASE_URL --port 0 --inbox --inbox-table ops.agent_inbox
  signalyard replay cassettes/ --config replay.config.js --json > report.json
  signalyard inspect --store sqlite:sessions.db --replay report.json`,
    )
    .action(async (flags: InspectFlags) => {
      if (flags.inboxTable !== undefined && flags.inbox !== true) {
        throw new CliUsageError({ message: '--inbox-table applies with --inbox only' });
      }
      // Checked now (missing, unreadable): the page reads it again on every reload.
      if (flags.replay !== undefined) await readTextFile(flags.replay, ctx.cwd);
      const opened = await openStore(storeOptionsOf(flags), ctx.cwd);
      let inbox: OpenedInbox | undefined;
      try {
        inbox = await inspectedInbox(flags, ctx.cwd);
        const { startInspector, InspectorError } = await import('@signalyard/inspector');
        const inspector = await startInspector({
          store: opened.store,
          ...(inbox !== undefined && { inbox: inbox.inbox }),
          ...(flags.replay !== undefined && { replayReport: resolve(ctx.cwd, flags.replay) }),
          port: flags.port,
          host: flags.host,
        }).catch((error: unknown) => {
          if (InspectorError.isInstance(error)) throw new CliUsageError({ message: error.message, cause: error });
          throw error;
        });
        const what = inbox === undefined ? opened.shown : `${opened.shown} with its inbox`;
        ctx.stdout.write(`inspector: ${inspector.url}\n(${what}, read-only; Ctrl-C stops it)\n`);
        if (flags.replay !== undefined) ctx.stdout.write(`replay report: ${inspector.url}#replay\n`);
        await untilStopped(abortSignal);
        await inspector.close();
      } catch (error) {
        throw inboxStoreError(storeError(error, opened.shown), opened.shown, flags.inboxTable);
      } finally {
        await inbox?.close();
        await opened.close();
      }
    });
}
