import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  SignalyardError,
  describeValue,
  type Inbox,
  type InboxDeadLetter,
  type InboxEntry,
  type InboxLeaseInfo,
  type InspectableInbox,
} from '@signalyard/core';
import { errorCode, errorText } from '@signalyard/core/internal';
import { Option, type Command } from 'commander';
import { terminalJson, terminalText } from './cli-io.js';
import { count, type CommandContext } from './command-context.js';
import { CliStoreError } from './errors/cli-store-error.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { integerParser } from './sessions-command.js';
import { renderTable } from './session-format.js';
import { maskPassword, parseStoreUrl } from './store-url.js';

/** The subcommands of `signalyard inbox`. */
export const INBOX_SUBCOMMANDS: ReadonlySet<string> = new Set(['list', 'dead']);

/** The flags every `inbox` subcommand takes, as parsed. */
interface InboxFlags {
  readonly store: string;
  readonly table?: string;
  readonly limit?: number;
  readonly json?: boolean;
}

/** An inbox opened for reading, as messages name it, and how to close it. */
export interface OpenedInbox {
  readonly inbox: Inbox & InspectableInbox;
  readonly shown: string;
  /**
   * PostgreSQL: whether the inbox's tables are in the database (read-only: `PostgresInbox.exists()`).
   * SQLite: `true` (opening the inbox made them: look first with `SqliteInbox.existsIn`).
   */
  exists(): Promise<boolean>;
  close(): Promise<void>;
}

/** How long a connection attempt to PostgreSQL may take before the command gives up. */
const CONNECT_TIMEOUT_MS = 10_000;

/** `signalyard inbox list|dead --store <url>`: what waits in a durable inbox, and what was poisoned. */
export function addInboxCommand(program: Command, ctx: CommandContext): void {
  const inbox = program
    .command('inbox')
    .description('list the entries waiting in a durable inbox, the leases held and the dead letters');
  withInboxOptions(inbox.command('list'))
    .description('the entries not settled yet, per session, with the lease that holds each session')
    .option('--session <key>', "only this session's entries")
    .action(async (flags: InboxFlags & { session?: string }) => {
      await withInbox(ctx, flags, (opened) => listEntries(ctx, opened.inbox, flags));
    });
  withInboxOptions(inbox.command('dead'))
    .description('the dead letters: entries settled failed with INBOX_POISONED after too many deliveries')
    .action(async (flags: InboxFlags) => {
      await withInbox(ctx, flags, (opened) => listDead(ctx, opened.inbox, flags));
    });
  inbox.addHelpText(
    'after',
    `
The store is the one your workers' inbox uses: sqlite:<path> (SqliteInbox, beside the sessions)
or a postgres:// connection string (PostgresInbox; --table names its entries table, default
signalyard_inbox). Session keys are printed with control and bidi characters escaped.

Examples:
  signalyard inbox list --store sqlite:./sessions.db
  signalyard inbox list --store postgres://app@db/prod --session agent:support:main --json
  signalyard inbox dead --store postgres://app@db/prod --limit 20`,
  );
}

function withInboxOptions(command: Command): Command {
  return command
    .requiredOption('--store <url>', "the inbox's database: sqlite:<path> or a postgres:// connection string")
    .option('--table <name>', 'PostgreSQL: the inbox entries table (default: signalyard_inbox)')
    .addOption(
      new Option('--limit <n>', 'at most this many entries (default: 1000)').argParser(
        integerParser(1, 'how many entries to list'),
      ),
    )
    .option('--json', 'one JSON object per line instead of a table');
}

/** Opens the inbox, runs `fn` with it and closes it; its errors become CLI errors naming the store. */
async function withInbox(ctx: CommandContext, flags: InboxFlags, fn: (opened: OpenedInbox) => Promise<void>) {
  const opened = await openInbox(flags, ctx.cwd);
  try {
    await fn(opened);
  } catch (error) {
    throw inboxStoreError(error, opened.shown, flags.table);
  } finally {
    await opened.close();
  }
}

/**
 * Opens the inbox of `--store` (the store packages are loaded only now; `table`: PostgreSQL's
 * entries table). An SQLite file must exist: the command never creates a database for a
 * mistyped path.
 */
export async function openInbox(flags: { store: string; table?: string }, cwd: string): Promise<OpenedInbox> {
  const url = parseStoreUrl(flags.store);
  if (url.kind === 'sqlite') {
    if (flags.table !== undefined) {
      throw new CliUsageError({
        message: `--table ${describeValue(flags.table)} applies to a postgres:// store only (an SQLite file has one inbox)`,
      });
    }
    const file = resolve(cwd, url.path);
    const isFile = await stat(file).then(
      (s) => s.isFile(),
      (error: unknown) => {
        const code = errorCode(error);
        const reason = code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : errorText(error);
        throw new CliStoreError({
          code: 'CLI_STORE_UNAVAILABLE',
          store: url.shown,
          message: `cannot open ${describeValue(url.shown)}: ${reason}`,
          cause: error,
        });
      },
    );
    if (!isFile) {
      throw new CliStoreError({
        code: 'CLI_STORE_UNAVAILABLE',
        store: url.shown,
        message: `cannot open ${describeValue(url.shown)}: it is not a file`,
      });
    }
    const { SqliteInbox } = await import('@signalyard/store-sqlite');
    try {
      const inbox = new SqliteInbox({ path: file });
      return { inbox, shown: url.shown, exists: () => Promise.resolve(true), close: () => inbox.close() };
    } catch (error) {
      throw inboxStoreError(error, url.shown, undefined);
    }
  }
  const [{ PostgresInbox }, { default: pg }] = await Promise.all([import('@signalyard/store-postgres'), import('pg')]);
  const pool = new pg.Pool({
    connectionString: url.connectionString,
    max: 2,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  pool.on('error', () => undefined); // an idle connection the server closed: the next call reports
  let inbox: InstanceType<typeof PostgresInbox>;
  try {
    inbox = new PostgresInbox({ pool, ...(flags.table !== undefined && { table: flags.table }) });
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new CliUsageError({ message: `--table ${describeValue(flags.table)}: ${errorText(error)}`, cause: error });
  }
  const close = async (): Promise<void> => {
    await inbox.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
  };
  return { inbox, shown: url.shown, exists: () => inbox.exists(), close };
}

/** PostgreSQL error classes that mean "could not get a working connection": connection, login, database. */
const UNREACHABLE_PG = /^(08|28|3D)/;

/** The SQLSTATE (or socket error code) of a `pg` error; `''` for anything else. */
function pgCodeOf(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : '';
}

/** An inbox's error as the CLI's, naming the store (password masked); CLI errors pass through. */
export function inboxStoreError(error: unknown, shown: string, table: string | undefined): unknown {
  if (CliStoreError.isInstance(error) || CliUsageError.isInstance(error) || !SignalyardError.isInstance(error)) {
    return error;
  }
  const store = describeValue(shown);
  const text = maskPassword(error.message);
  const pgCode = pgCodeOf(error.cause);
  const unavailable = (message: string): CliStoreError =>
    new CliStoreError({ code: 'CLI_STORE_UNAVAILABLE', store: shown, message, cause: error });
  if (pgCode === '42P01' || pgCode === '42883') {
    return unavailable(
      `${store} has no inbox table ${describeValue(table ?? 'signalyard_inbox')}: no worker has migrated this inbox (check --table; PostgresInbox.migrate() creates it). ${text}`,
    );
  }
  if (error.code === 'INBOX_UNAVAILABLE' || UNREACHABLE_PG.test(pgCode) || pgCode.startsWith('E')) {
    return unavailable(`cannot reach ${store}: ${text}`);
  }
  return new CliStoreError({ code: 'CLI_STORE_FAILED', store: shown, message: `${store}: ${text}`, cause: error });
}

/** `inbox list`: pending entries per session, with the lease holding each session. */
async function listEntries(
  ctx: CommandContext,
  inbox: InspectableInbox,
  flags: InboxFlags & { session?: string },
): Promise<void> {
  const [entries, leases] = await Promise.all([
    inbox.pending({
      ...(flags.session !== undefined && { sessionKey: flags.session }),
      ...(flags.limit !== undefined && { limit: flags.limit }),
    }),
    inbox.leases(),
  ]);
  const leaseOf = new Map<string, InboxLeaseInfo>(leases.map((l) => [l.key, l]));
  if (flags.json === true) {
    for (const e of entries)
      ctx.stdout.write(`${terminalJson({ ...entryJson(e), lease: leaseOf.get(e.sessionKey) ?? null })}\n`);
    return;
  }
  const sessions = new Set(entries.map((e) => e.sessionKey));
  const where = flags.session === undefined ? '' : ` for ${terminalText(flags.session)}`;
  ctx.stdout.write(
    `${count(entries.length, 'entry', 'entries')} pending${where} in ${count(sessions.size, 'session')}; ${count(leases.length, 'lease')} held\n`,
  );
  if (entries.length === 0) return;
  const rows = entries.map((e) => {
    const lease = leaseOf.get(e.sessionKey);
    return [
      terminalText(e.sessionKey),
      e.seq,
      terminalText(e.control ?? e.signal.kind),
      String(e.attempts),
      terminalText(e.acceptedAt),
      lease === undefined ? '-' : `${terminalText(lease.workerId)} until ${terminalText(lease.expiresAt)}`,
    ];
  });
  ctx.stdout.write(
    renderTable(['SESSION', 'SEQ', 'KIND', 'ATTEMPTS', 'ACCEPTED', 'LEASE'], rows, ctx.out, new Set([1, 3])),
  );
}

/** `inbox dead`: the dead letters with their error. */
async function listDead(ctx: CommandContext, inbox: Inbox, flags: InboxFlags): Promise<void> {
  const dead: InboxDeadLetter[] = [];
  for await (const letter of inbox.deadLetters({ limit: flags.limit ?? 1000 })) dead.push(letter);
  if (flags.json === true) {
    for (const d of dead) ctx.stdout.write(`${terminalJson({ entry: entryJson(d.entry), outcome: d.outcome })}\n`);
    return;
  }
  ctx.stdout.write(`${count(dead.length, 'dead letter')}\n`);
  if (dead.length === 0) return;
  const rows = dead.map(({ entry, outcome }) => [
    terminalText(entry.sessionKey),
    entry.seq,
    terminalText(entry.receiptId),
    String(entry.attempts),
    terminalText(outcome.error === undefined ? outcome.status : `${outcome.error.code}: ${outcome.error.message}`),
  ]);
  ctx.stdout.write(renderTable(['SESSION', 'SEQ', 'RECEIPT', 'ATTEMPTS', 'ERROR'], rows, ctx.out, new Set([1, 3])));
}

/** An entry as a JSON line shows it. */
function entryJson(e: InboxEntry): Record<string, unknown> {
  return {
    receiptId: e.receiptId,
    sessionKey: e.sessionKey,
    seq: e.seq,
    acceptedAt: e.acceptedAt,
    ...(e.agentId !== undefined && { agentId: e.agentId }),
    ...(e.control !== undefined && { control: e.control }),
    signal: e.signal,
    attempts: e.attempts,
  };
}
