import { Argument, InvalidArgumentError, Option, type Command } from 'commander';
import { terminalText } from './cli-io.js';
import type { CommandContext } from './command-context.js';
import { openStore, storeError, type HistoryStore, type StoreOptions } from './open-store.js';
import { deleteSession, forkSession, rewindSession, sessionKeyArgument } from './offline-timeline.js';
import { historyCommand, listCommand, showCommand } from './sessions-read-commands.js';

/** The subcommands of `signalyard sessions` (for the `--help` hint of a usage error). */
export const SESSIONS_SUBCOMMANDS: ReadonlySet<string> = new Set([
  'list',
  'show',
  'history',
  'fork',
  'rewind',
  'delete',
]);

/** An integer option or argument: `min` or more. */
export function integerParser(min: number, what: string): (value: string) => number {
  return (value: string): number => {
    const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected ${what}, an integer >= ${min}`);
    return n;
  };
}

/** A version number: an integer >= 1. */
const parseVersion = integerParser(1, 'a session version');
/** A count: an integer >= 1. */
const parseCount = integerParser(1, 'a count');

/** The options every `sessions` subcommand (and `inspect`) takes, as parsed. */
export interface StoreFlags {
  readonly store: string;
  readonly table?: string;
  readonly keepVersions?: number;
  readonly migrate?: boolean;
}

/** Adds `--store`, `--table`, `--keep-versions` and `--migrate` to a subcommand. */
export function withStoreOptions(command: Command): Command {
  return command
    .requiredOption('--store <url>', 'the checkpoint store: sqlite:<path> or a postgres:// connection string')
    .option('--table <name>', 'PostgreSQL: the checkpoint table (default: signalyard_checkpoints)')
    .addOption(
      new Option(
        '--keep-versions <n>',
        "versions a save keeps before the current one, and that are read: your runners' keepVersions (default: 20)",
      ).argParser(integerParser(0, 'how many versions to keep')),
    )
    .option('--migrate', "PostgreSQL: bring the database to this release's schema first (idempotent)");
}

/** The parsed store flags as {@link openStore} takes them. */
export function storeOptionsOf(flags: StoreFlags): StoreOptions {
  return {
    store: flags.store,
    ...(flags.table !== undefined && { table: flags.table }),
    ...(flags.keepVersions !== undefined && { keepVersions: flags.keepVersions }),
    ...(flags.migrate === true && { migrate: true }),
  };
}

/**
 * Opens the store, runs `fn` with it and closes it; store errors become CLI errors naming the
 * store.
 */
async function withStore<T>(
  ctx: CommandContext,
  flags: StoreFlags,
  fn: (store: HistoryStore) => Promise<T>,
): Promise<T> {
  const opened = await openStore(storeOptionsOf(flags), ctx.cwd);
  try {
    return await fn(opened.store);
  } catch (error) {
    throw storeError(error, opened.shown);
  } finally {
    await opened.close();
  }
}

export const STORES_HELP = `
Stores: --store sqlite:<path> (an existing file: relative to the working directory) or
--store postgres://user@host:5432/db (password masked in messages). A PostgreSQL database no
runner has migrated, or one of an earlier release, needs --migrate once.`;

/**
 * `signalyard sessions list|show|history|fork|rewind|delete --store <url>`: the sessions in a
 * checkpoint store, their version timelines, and time travel without a Runner.
 */
export function addSessionsCommand(program: Command, ctx: CommandContext): void {
  const sessions = program
    .command('sessions')
    .description('list sessions in a store, show one, print its version history, fork, rewind or delete it')
    .addHelpText(
      'after',
      `${STORES_HELP}

Examples:
  signalyard sessions list --store sqlite:sessions.db --prefix agent:support:
  signalyard sessions history agent:support:main --store sqlite:sessions.db
  signalyard sessions fork agent:support:main agent:support:what-if --version 3 --store $DATABASE_URL
  signalyard sessions rewind agent:support:main 3 --store $DATABASE_URL`,
    );

  withStoreOptions(sessions.command('list'))
    .description('list the sessions: key, agent, version, last update (in key order)')
    .option('--prefix <prefix>', 'only keys starting with this, e.g. agent:support:')
    .option('--after <key>', 'start after this key (the last key of the previous page)')
    .addOption(new Option('--limit <n>', 'list at most n sessions').argParser(parseCount))
    .option('--json', 'one JSON object per line: { sessionKey, agentId, version, updatedAt }')
    .action(async (flags: StoreFlags & { prefix?: string; after?: string; limit?: number; json?: boolean }) => {
      await withStore(ctx, flags, (store) => listCommand(ctx, store, flags));
    });

  withStoreOptions(sessions.command('show'))
    .description('show a session: agent, version, cause, strategy, pending approvals, the end of its history')
    .argument('<key>', 'the session key')
    .addOption(new Option('--version <n>', 'a past version (default: the current one)').argParser(parseVersion))
    .addOption(
      new Option('--tail <n>', 'how many history messages to print (default: 10)').argParser(
        integerParser(0, 'a count'),
      ),
    )
    .option('--json', 'print the session as JSON')
    .action(async (key: string, flags: StoreFlags & { version?: number; tail?: number; json?: boolean }) => {
      const session = sessionKeyArgument(key, 'session key');
      await withStore(ctx, flags, (store) => showCommand(ctx, store, session.key, flags));
    });

  withStoreOptions(sessions.command('history'))
    .description("print a session's version timeline, newest first: version, time, cause, route, status")
    .argument('<key>', 'the session key')
    .addOption(new Option('--before <version>', 'only versions lower than this (paging)').argParser(parseVersion))
    .addOption(new Option('--limit <n>', 'at most n versions').argParser(parseCount))
    .option('--json', 'one JSON object per line, as Runner.history yields them')
    .action(async (key: string, flags: StoreFlags & { before?: number; limit?: number; json?: boolean }) => {
      const session = sessionKeyArgument(key, 'session key');
      await withStore(ctx, flags, (store) => historyCommand(ctx, store, session.key, flags));
    });

  addWriteCommands(sessions, ctx);
}

/** `sessions fork`, `sessions rewind` and `sessions delete`. */
function addWriteCommands(sessions: Command, ctx: CommandContext): void {
  const { stdout } = ctx;
  withStoreOptions(sessions.command('fork'))
    .description('copy a version of a session into a new session of the same agent (version 1)')
    .argument('<from>', 'the session to copy (left untouched)')
    .argument('<to>', 'the new session key: must not exist, same agent (agent:<id>:...)')
    .addOption(new Option('--version <n>', 'the version to copy (default: the current one)').argParser(parseVersion))
    .action(async (fromText: string, toText: string, flags: StoreFlags & { version?: number }) => {
      const from = sessionKeyArgument(fromText, 'session key <from>');
      const to = sessionKeyArgument(toText, 'session key <to>');
      const forked = await withStore(ctx, flags, (store) => forkSession(store, from.key, to, flags.version));
      const source = forked.data.cause?.forkedFrom?.version;
      stdout.write(
        `forked ${terminalText(from.key)} version ${source} into ${terminalText(to.key)} (version ${forked.version})\n`,
      );
    });

  withStoreOptions(sessions.command('rewind'))
    .description("save a new version of a session whose data equals an earlier version's")
    .argument('<key>', 'the session key')
    .addArgument(new Argument('<version>', 'the version to restore').argParser(parseVersion))
    .action(async (key: string, version: number, flags: StoreFlags) => {
      const session = sessionKeyArgument(key, 'session key');
      const rewound = await withStore(ctx, flags, (store) => rewindSession(store, session.key, version));
      stdout.write(
        `rewound ${terminalText(session.key)} to version ${rewound.rewoundTo}: saved as version ${rewound.version}\n`,
      );
    });

  withStoreOptions(sessions.command('delete'))
    .description('delete a session and its whole history')
    .argument('<key>', 'the session key')
    .action(async (key: string, flags: StoreFlags) => {
      const session = sessionKeyArgument(key, 'session key');
      const version = await withStore(ctx, flags, (store) => deleteSession(store, session.key));
      stdout.write(`deleted ${terminalText(session.key)} (version ${version} and its history)\n`);
    });
}
