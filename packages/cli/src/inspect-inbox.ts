import { resolve } from 'node:path';
import { describeValue } from '@signalyard/core';
import { CliStoreError } from './errors/cli-store-error.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { inboxStoreError, openInbox, type OpenedInbox } from './inbox-command.js';
import { parseStoreUrl } from './store-url.js';

/** What `inspect` was asked about the inbox. */
export interface InspectInboxFlags {
  /** `--store`: the database holding the sessions (and, maybe, the inbox). */
  readonly store: string;
  /** `--inbox`: show the inbox, refusing a database without one. */
  readonly inbox?: boolean;
  /** `--inbox-table`: PostgreSQL's inbox entries table, when not the default. */
  readonly inboxTable?: string;
}

/**
 * The durable inbox `signalyard inspect` shows beside the store's sessions.
 *
 * - Without `--inbox`: the inbox the store's database holds under the default name — an SQLite
 *   file's inbox tables, PostgreSQL's `signalyard_inbox` (found through the connection's
 *   `search_path`) — when there is one, else `undefined`. Looked for without writing: nothing is
 *   created in a database that has no inbox.
 * - With `--inbox` (and `--inbox-table`, PostgreSQL): that inbox; a database without it is
 *   refused, naming what is missing.
 *
 * @throws CliStoreError `CLI_STORE_UNAVAILABLE` (no inbox with `--inbox`, the database
 * unreachable), `CLI_STORE_FAILED`; CliUsageError for a bad `--inbox-table`, or one with an
 * SQLite store.
 */
export async function inspectedInbox(flags: InspectInboxFlags, cwd: string): Promise<OpenedInbox | undefined> {
  const required = flags.inbox === true;
  const url = parseStoreUrl(flags.store);
  if (url.kind === 'sqlite') {
    if (flags.inboxTable !== undefined) {
      throw new CliUsageError({
        message: `--inbox-table ${describeValue(flags.inboxTable)} applies to a postgres:// store only (an SQLite file has one inbox)`,
      });
    }
    const { SqliteInbox } = await import('@signalyard/store-sqlite');
    let found: boolean;
    try {
      found = SqliteInbox.existsIn(resolve(cwd, url.path));
    } catch (error) {
      throw inboxStoreError(error, url.shown, undefined);
    }
    if (found) return openInbox({ store: flags.store }, cwd);
    if (!required) return undefined;
    throw noInbox(url.shown, `${describeValue(url.shown)} has no inbox: no SqliteInbox has opened this file`);
  }
  const opened = await openInbox(
    { store: flags.store, ...(flags.inboxTable !== undefined && { table: flags.inboxTable }) },
    cwd,
  );
  let found: boolean;
  try {
    found = await opened.exists();
  } catch (error) {
    await opened.close();
    throw inboxStoreError(error, opened.shown, flags.inboxTable);
  }
  if (found) return opened;
  await opened.close();
  if (!required) return undefined;
  throw noInbox(
    url.shown,
    `${describeValue(url.shown)} has no inbox table ${describeValue(flags.inboxTable ?? 'signalyard_inbox')}: no worker has migrated this inbox (check --inbox-table; PostgresInbox.migrate() creates it)`,
  );
}

function noInbox(shown: string, message: string): CliStoreError {
  return new CliStoreError({ code: 'CLI_STORE_UNAVAILABLE', store: shown, message });
}
