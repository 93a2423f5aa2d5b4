import { resolve } from 'node:path';
import { describeValue } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import {
  ReplayError,
  evaluate,
  exportCassettes,
  loadCassettes,
  noMarkersVisible,
  replay,
  sameHandoffs,
  sameRoute,
  saveCassettes,
  type Cassette,
  type EvaluateResult,
  type ReplayReport,
  type ReplayRunnerFactory,
  type ReplayableRunner,
  type Scorer,
} from '@signalyard/replay';
import { Option, type Command } from 'commander';
import { createRunner, type RunnerOptions } from 'signalyard';
import { terminalText } from './cli-io.js';
import { count, type CommandContext } from './command-context.js';
import { CliConfigError } from './errors/cli-config-error.js';
import { CliInputError } from './errors/cli-input-error.js';
import { CliReplayError } from './errors/cli-replay-error.js';
import { openStore, storeError } from './open-store.js';
import { importConfigDefault } from './runner-config.js';
import { storeOptionsOf, withStoreOptions, type StoreFlags } from './sessions-command.js';

const SCORERS: Readonly<Record<string, () => Scorer>> = { sameRoute, sameHandoffs, noMarkersVisible };

/** `signalyard cassettes export`, `signalyard replay` and `signalyard eval`. */
export function addReplayCommands(program: Command, ctx: CommandContext): void {
  const cassettes = program.command('cassettes').description('cassettes for replays: export them from a store');
  withStoreOptions(
    cassettes.command('export').description("write a store's sessions as cassettes (one JSON file each)"),
  )
    .requiredOption('--out <dir>', 'the folder to write the cassettes to (created when missing)')
    .option('--prefix <prefix>', 'only sessions whose key starts with it')
    .option('--session <key...>', 'only these sessions')
    .option('--since <time>', 'only turns at or after this ISO-8601 time (earlier versions seed the replay)')
    .addHelpText(
      'after',
      `
Turns a store cannot rebuild are written as partial, with their reason (payload_missing,
pipeline_stage_calls, parallel_members, before_kept_versions, history_trimmed): a replay stops there,
at the first turn too. For sessions whose oldest versions were pruned (before_kept_versions), pass
--since after their oldest kept version: it then seeds the replay instead of being a turn.

Examples:
  signalyard cassettes export --store sqlite:sessions.db --out cassettes/
  signalyard cassettes export --store postgres://app@db:5432/prod --prefix agent:desk: --since 2026-11-20 --out cassettes/`,
    )
    .action(async (options: ExportFlags) => {
      await exportCommand(ctx, options);
    });
  withRunOptions(
    program
      .command('replay')
      .description("replay cassettes against the app's runner (--config): exit 1 on any divergence"),
  )
    .addHelpText('after', RUN_HELP('replay cassettes/ --config replay.config.ts'))
    .action(async (paths: string[], options: RunFlags) => {
      await replayCommand(ctx, paths, options);
    });
  withRunOptions(program.command('eval').description('replay cassettes and score them: exit 1 below --threshold'))
    .addOption(new Option('--threshold <n>', 'the lowest mean score (0 to 1)').argParser(parseThreshold).default(1))
    .addOption(new Option('--scorer <name...>', 'built-in scorers (default all three)').choices(Object.keys(SCORERS)))
    .addHelpText('after', RUN_HELP('eval cassettes/ --config replay.config.ts --threshold 0.9'))
    .action(async (paths: string[], options: RunFlags & { threshold: number; scorer?: string[] }) => {
      await evalCommand(ctx, paths, options);
    });
}

interface ExportFlags extends StoreFlags {
  readonly out: string;
  readonly prefix?: string;
  readonly session?: string[];
  readonly since?: string;
}

interface RunFlags {
  readonly config: string;
  readonly json?: boolean;
  readonly live?: string[];
}

const RUN_HELP = (example: string): string => `
The --config module's default export must be a function called with { store, clock, model, tools }
for each cassette, returning the runner (or its RunnerOptions) built with today's configuration,
e.g. (parts) => createRunner({ agents: [...crewEngine(crew, { model: parts.model, tools: parts.tools(myTools) })],
store: parts.store, clock: parts.clock }). A plain RunnerOptions export is refused: it would run
the real model and tools. Named export \`scorers\` (eval): extra scorer functions.

Example:
  signalyard ${example}`;

function withRunOptions(command: Command): Command {
  return command
    .argument('<cassettes...>', 'cassette files or folders of them')
    .requiredOption('--config <module>', 'the module building the runner under test (see below)')
    .option('--live <tool...>', 'tools that may run for real when a call is not recorded')
    .option('--json', 'print the report as JSON');
}

function parseThreshold(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1))
    throw new CliInputError({
      file: value,
      message: `--threshold ${describeValue(value)}: expected a number from 0 to 1`,
    });
  return n;
}

async function exportCommand(ctx: CommandContext, flags: ExportFlags): Promise<void> {
  const opened = await openStore(storeOptionsOf(flags), ctx.cwd);
  let cassettes: Cassette[];
  try {
    cassettes = await exportCassettes(opened.store, {
      ...(flags.prefix !== undefined && { prefix: flags.prefix }),
      ...(flags.session !== undefined && { sessions: flags.session }),
      ...(flags.since !== undefined && { since: flags.since }),
    });
  } catch (error) {
    if (ReplayError.isInstance(error)) throw new CliInputError({ file: opened.shown, message: error.message });
    throw storeError(error, opened.shown);
  } finally {
    await opened.close();
  }
  const dir = resolve(ctx.cwd, flags.out);
  await saveCassettes(dir, cassettes);
  const turns = cassettes.reduce((n, c) => n + c.turns.length, 0);
  const partial = cassettes.reduce((n, c) => n + c.turns.filter((t) => t.partial !== undefined).length, 0);
  ctx.stdout.write(
    `${count(cassettes.length, 'cassette')} (${count(turns, 'turn')}, ${partial} partial) written to ${terminalText(flags.out)}\n`,
  );
}

/** The cassettes and the runner factory of a `replay` / `eval` command line. */
async function prepare(
  ctx: CommandContext,
  paths: readonly string[],
  flags: RunFlags,
): Promise<{ cassettes: Cassette[]; runner: ReplayRunnerFactory; extra: Scorer[] }> {
  let cassettes: Cassette[];
  try {
    cassettes = await loadCassettes(paths.map((p) => resolve(ctx.cwd, p)));
  } catch (error) {
    const file = ReplayError.isInstance(error) ? (error.file ?? paths.join(' ')) : paths.join(' ');
    throw new CliInputError({ file, message: errorText(error), cause: error });
  }
  const { exported, module } = await importConfigDefault(flags.config, ctx.cwd);
  const shown = describeValue(flags.config);
  if (typeof exported !== 'function')
    throw new CliConfigError({
      code: 'CLI_CONFIG_INVALID',
      file: flags.config,
      message: `config ${shown}: replay needs a default export function ({ store, clock, model, tools }) => Runner (or its RunnerOptions), built on what the replay supplies; a plain RunnerOptions export is refused — it would run the real model and tools`,
    });
  const build = exported as (parts: Parameters<ReplayRunnerFactory>[0]) => unknown;
  const runner: ReplayRunnerFactory = async (parts) => {
    const made = await build(parts);
    const r = made as Partial<ReplayableRunner> | null;
    if (typeof r === 'object' && r !== null && typeof r.dispatch === 'function') return r as ReplayableRunner;
    return createRunner(made as RunnerOptions);
  };
  const extra = Array.isArray(module.scorers) ? (module.scorers as Scorer[]) : [];
  return { cassettes, runner, extra };
}

async function replayCommand(ctx: CommandContext, paths: readonly string[], flags: RunFlags): Promise<void> {
  const { cassettes, runner } = await prepare(ctx, paths, flags);
  const report = await replay(cassettes, { runner, ...(flags.live !== undefined && { live: flags.live }) });
  ctx.stdout.write(flags.json === true ? `${JSON.stringify(report, null, 2)}\n` : reportTable(report));
  const bad = report.diverged + report.failed;
  if (bad > 0)
    throw new CliReplayError({
      code: 'CLI_REPLAY_DIVERGED',
      message: `${bad} of ${count(report.sessions.length, 'session')} diverged or failed`,
    });
}

async function evalCommand(
  ctx: CommandContext,
  paths: readonly string[],
  flags: RunFlags & { threshold: number; scorer?: string[] },
): Promise<void> {
  const { cassettes, runner, extra } = await prepare(ctx, paths, flags);
  const names = flags.scorer ?? Object.keys(SCORERS);
  const scorers = [...names.map((n) => (SCORERS[n] as () => Scorer)()), ...extra];
  let result: EvaluateResult;
  try {
    result = await evaluate(cassettes, {
      runner,
      scorers,
      threshold: flags.threshold,
      ...(flags.live !== undefined && { live: flags.live }),
    });
  } catch (error) {
    if (ReplayError.isInstance(error))
      throw new CliConfigError({ code: 'CLI_CONFIG_INVALID', file: flags.config, message: error.message });
    throw error;
  }
  ctx.stdout.write(flags.json === true ? `${JSON.stringify(result, null, 2)}\n` : evalTable(result));
  if (!result.passed)
    throw new CliReplayError({
      code: 'CLI_EVAL_BELOW_THRESHOLD',
      message: `scores below the threshold ${result.threshold} (${count(result.failing.length, 'failing session')})`,
    });
}

/** Rows padded into columns. */
function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return (
    rows
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** The replay as a table: the counts, then one row per session with its first divergence. */
function reportTable(report: ReplayReport): string {
  const head = `sessions ${report.sessions.length}, same ${report.same}, diverged ${report.diverged}, failed ${report.failed}, partial ${report.partial}\n\n`;
  const rows = report.sessions.map((s) => [
    terminalText(s.sessionKey),
    s.status,
    terminalText(
      s.divergence?.text ??
        s.error?.message ??
        (s.partial?.turn !== undefined ? `stopped at turn ${s.partial.turn}: ${s.partial.reason}` : ''),
    ),
  ]);
  return head + (rows.length === 0 ? '' : table([['session', 'status', 'first divergence'], ...rows]));
}

function evalTable(result: EvaluateResult): string {
  const means = table([['scorer', 'mean'], ...result.means.map((m) => [m.name, m.mean.toFixed(3)])]);
  const failing =
    result.failing.length === 0
      ? 'no failing session\n'
      : table([
          ['failing session', 'status', 'low scores'],
          ...result.failing.map((s) => [
            terminalText(s.sessionKey),
            s.status,
            terminalText(
              s.scores
                .filter((x) => x.score < result.threshold)
                .map((x) => `${x.name} ${x.score.toFixed(2)}${x.reason === undefined ? '' : ` (${x.reason})`}`)
                .join('; '),
            ),
          ]),
        ]);
  return `${reportTable(result.report)}\n${means}\n${failing}${result.passed ? 'passed' : 'FAILED'} (threshold ${result.threshold})\n`;
}
