import { hostname } from 'node:os';
import { describeValue, type RunnerEvent } from '@signalyard/core';
import { onAbort } from '@signalyard/core/internal';
import { Option, type Command } from 'commander';
import type { RunnerOptions } from 'signalyard';
import { terminalText } from './cli-io.js';
import type { CommandContext } from './command-context.js';
import { CliConfigError } from './errors/cli-config-error.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { openConfiguredRunner, type ConfiguredRunner } from './runner-config.js';
import { integerParser } from './sessions-command.js';

/** The options of `signalyard worker`, as parsed. */
interface WorkerFlags {
  readonly config: string;
  readonly id?: string;
  readonly statusEvery: number;
}

/** What the worker counts for its status line. */
interface WorkerCounts {
  settled: number;
  failed: number;
  dead: number;
}

const WORKER_ID = /^[A-Za-z0-9._:@-]{1,200}$/;

/** `signalyard worker --config <module>`: settles the durable inbox's entries until stopped. */
export function addWorkerCommand(program: Command, ctx: CommandContext, abortSignal: AbortSignal | undefined): void {
  program
    .command('worker')
    .description("settle the entries of the app's durable inbox (--config) until SIGTERM / Ctrl-C, then drain")
    .requiredOption(
      '--config <module>',
      "the app's runner configuration with a durable inbox and a shared store: default export RunnerOptions or a function returning them (.ts through tsx)",
    )
    .option('--id <workerId>', "the worker's id in leases and the inspector (default: <host>:<pid>)")
    .addOption(
      new Option('--status-every <seconds>', 'print a status line this often (default: 60)')
        .argParser(integerParser(1, 'seconds between status lines'))
        .default(60),
    )
    .addHelpText(
      'after',
      `
Builds the app's runner from --config as a worker (RunnerOptions.worker: true unless the config
gives worker options; a config with worker: false is refused) and settles the entries of its
inbox: it takes sessions' leases, applies their entries in seq order and saves. Prints one status
line per --status-every: settled, failed, dead letters, leases held.

SIGTERM or Ctrl-C drains: no new leases, the turns in flight finish (up to the config's
closeTimeoutMs), the leases are released so other workers take the sessions at once, and the
command exits 0. A second signal while draining exits 1 at once: the turns in flight are
abandoned, and their entries are settled by another worker after their lease expires.

Examples:
  signalyard worker --config dist/runner.config.js
  signalyard worker --config runner.config.ts --id worker-a --status-every 10`,
    )
    .action(async (flags: WorkerFlags) => {
      await workerCommand(ctx, flags, abortSignal);
    });
}

/** The config's options as a worker's: `worker: true` unless it gives worker options; refuses a producer or no durable inbox. */
function asWorker(file: string, id: string | undefined, options: RunnerOptions): RunnerOptions {
  const shown = describeValue(file);
  if (options.inbox?.durable !== true) {
    throw new CliConfigError({
      code: 'CLI_CONFIG_INVALID',
      file,
      message: `config ${shown} gives no durable inbox: a worker settles the entries of RunnerOptions.inbox (SqliteInbox, PostgresInbox, …)`,
    });
  }
  if (options.worker === false) {
    throw new CliConfigError({
      code: 'CLI_CONFIG_INVALID',
      file,
      message: `config ${shown} sets worker: false (a producer): run the command with a config whose runner settles entries`,
    });
  }
  const given = typeof options.worker === 'object' ? options.worker : {};
  return { ...options, worker: { ...given, id: id ?? given.id ?? `${hostname()}:${process.pid}` } };
}

/** Counts the outcomes the runner settles: every one, the failed ones, the poisoned ones. */
function counting(counts: WorkerCounts): (event: RunnerEvent) => void {
  return (event) => {
    if (event.type !== 'outcome') return;
    counts.settled++;
    if (event.outcome.status === 'failed') counts.failed++;
    if (event.outcome.error?.code === 'INBOX_POISONED') counts.dead++;
  };
}

/** How many leases `workerId` holds, when the inbox can tell (`leases()`); `undefined` otherwise. */
async function leasesHeld(inbox: unknown, workerId: string): Promise<number | undefined> {
  const leases = (inbox as { leases?: () => Promise<readonly { workerId: string }[]> }).leases;
  if (typeof leases !== 'function') return undefined;
  try {
    return (await leases.call(inbox)).filter((l) => l.workerId === workerId).length;
  } catch {
    return undefined; // the status line says "?": a failing inbox shows in the settled counts
  }
}

async function workerCommand(ctx: CommandContext, flags: WorkerFlags, abortSignal: AbortSignal | undefined) {
  if (flags.id !== undefined && !WORKER_ID.test(flags.id)) {
    throw new CliUsageError({
      message: `--id ${describeValue(flags.id)}: expected 1–200 letters, digits and . _ : @ -`,
    });
  }
  // Listening before the runner starts: a signal while it opens stops it once it has.
  const signals = stopSignals(ctx, abortSignal);
  let configured: ConfiguredRunner;
  try {
    configured = await openConfiguredRunner(flags.config, ctx.cwd, {
      requireStore: 'a worker',
      adjust: (options) => asWorker(flags.config, flags.id, options),
    });
  } catch (error) {
    signals.off();
    throw error;
  }
  const { runner, options } = configured;
  const workerId = (options.worker as { id: string }).id;
  const counts: WorkerCounts = { settled: 0, failed: 0, dead: 0 };
  const off = runner.on(counting(counts));
  const status = async (prefix: string): Promise<string> => {
    const held = await leasesHeld(options.inbox, workerId);
    return `${prefix}: settled ${counts.settled}, failed ${counts.failed}, dead letters ${counts.dead}, leases held ${held ?? '?'}`;
  };
  const timer = setInterval(() => {
    void status(`worker ${terminalText(workerId)}`).then((line) => ctx.stdout.write(`${line}\n`));
  }, flags.statusEvery * 1000);
  try {
    ctx.stdout.write(
      `worker ${terminalText(workerId)}: settling the inbox of ${describeValue(flags.config)} (SIGTERM or Ctrl-C drains)\n`,
    );
    const why = await signals.stopped;
    ctx.stdout.write(`worker ${terminalText(workerId)}: draining (${why}): finishing the turns in flight\n`);
  } finally {
    clearInterval(timer);
  }
  try {
    await runner.close(); // drains: the turns in flight finish, the leases are released
    ctx.stdout.write(`${await status(`worker ${terminalText(workerId)}: stopped`)}\n`);
  } finally {
    signals.off();
    off();
    await configured.close(); // the runner is closed already: the inbox, the lock and the store
  }
}

/**
 * Resolves `stopped` when the worker should stop: `abortSignal` (in-process), else the first
 * SIGINT / SIGTERM; a second signal while draining ends the process with exit code 1. One
 * listener stays on from start to `off()`, so no signal in between finds the default action
 * (which would kill the process without a word).
 */
function stopSignals(
  ctx: CommandContext,
  abortSignal: AbortSignal | undefined,
): { stopped: Promise<string>; off(): void } {
  if (abortSignal !== undefined) {
    const stopped = new Promise<string>((resolve) => {
      if (abortSignal.aborted) resolve('aborted');
      else
        onAbort(abortSignal, () => {
          resolve('aborted');
        });
    });
    return { stopped, off: () => undefined };
  }
  let received = 0;
  let stop!: (why: string) => void;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const on = (signal: NodeJS.Signals): void => {
    if (++received === 1) {
      stop(signal);
      return;
    }
    ctx.stderr.write(`signalyard: worker: ${signal} while draining: exiting now, the turns in flight abandoned\n`);
    process.exit(1);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    stopped,
    off: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}
