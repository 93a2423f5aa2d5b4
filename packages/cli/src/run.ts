import { readFileSync } from 'node:fs';
import { ConfigError, SignalyardError, describeValue } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import { Command, CommanderError, Option } from 'commander';
import { addApproveCommand } from './approve-command.js';
import { styleFor, terminalText, type CliIo, type CliOutput } from './cli-io.js';
import type { CommandContext } from './command-context.js';
import { CliConfigError } from './errors/cli-config-error.js';
import { CliInputError } from './errors/cli-input-error.js';
import { CliReplayError } from './errors/cli-replay-error.js';
import { CliSessionError } from './errors/cli-session-error.js';
import { CliStoreError } from './errors/cli-store-error.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { formatProblem } from './format-problems.js';
import { isHistoryError } from './history-error.js';
import { graphCommand, type GraphFormat } from './graph-command.js';
import { INBOX_SUBCOMMANDS, addInboxCommand } from './inbox-command.js';
import { addInspectCommand } from './inspect-command.js';
import { addMcpCommand } from './mcp-command.js';
import { addReplayCommands } from './replay-command.js';
import { resolveCommand } from './resolve-command.js';
import { routeExplainCommand } from './route-explain-command.js';
import type { RouteOptions } from './route-input.js';
import { SESSIONS_SUBCOMMANDS, addSessionsCommand } from './sessions-command.js';
import { validateCommand, type ValidateOptions } from './validate-command.js';
import { addWorkerCommand } from './worker-command.js';

/**
 * The exit codes of the `signalyard` command: `Ok` (0) success; `Problems` (1) the configuration
 * has problems, each printed as `file:line: path: message`, or the sessions in a store refused a
 * `sessions` command (a missing or existing session, a version no longer kept), said in one
 * line on stderr; `Usage` (2) the command line was wrong, an input could not be read or a store
 * could not be used, said in one line on stderr.
 *
 * @example
 * ```ts
 * if ((await run(['validate', 'crew.yaml'])) === ExitCode.Problems) process.exitCode = 1;
 * ```
 */
export const ExitCode = Object.freeze({
  /** Success: the product is on stdout. */
  Ok: 0,
  /** The configuration has problems (or a store refused a `sessions` command). */
  Problems: 1,
  /** The command line is wrong, or an input or a store cannot be used. */
  Usage: 2,
} as const);

/** One of the {@link ExitCode} values. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

const COMMANDS: ReadonlySet<string> = new Set([
  'validate',
  'graph',
  'resolve',
  'route',
  'sessions',
  'inspect',
  'approve',
  'mcp',
  'inbox',
  'worker',
  'cassettes',
  'replay',
  'eval',
  'help',
]);
const COMMAND_LIST =
  'validate, graph, resolve, route, sessions, inspect, approve, mcp, inbox, worker, cassettes, replay or eval';

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
    /* v8 ignore next 3 -- the package always ships its package.json */
  } catch {
    return 'unknown';
  }
}

/**
 * Runs the `signalyard` command line and resolves with its exit code; the `signalyard` bin is
 * `process.exitCode = await run(process.argv.slice(2))`.
 *
 * `argv` holds the arguments after the program name (`['validate', 'crew.yaml']`). Output goes to
 * `io.stdout` (the product: a summary, `validate`'s problems and warnings, a graph, a resolution
 * or its explanation, help) and `io.stderr` (errors, and the problems of a config `graph`,
 * `resolve` or `route explain` cannot use), with colour only when that stream is a terminal and
 * `NO_COLOR` is unset. `run` never calls `process.exit` and never rejects: every failure becomes
 * output and an exit code — 1 when a configuration has problems (every one printed as
 * `file:line: path: message`; with `validate --strict`, warnings count as problems) or the store
 * refused a `sessions` command, 2 for unknown commands or options, missing arguments, missing or
 * unreadable files, inputs that cannot be routed and stores that cannot be used (one line on
 * stderr). Each call builds its own parser: concurrent calls share nothing. One exception to
 * "never exits": `worker` run without `io.abortSignal` (as the bin runs it) ends the process with
 * exit code 1 on a second SIGINT / SIGTERM while it drains, as its help says.
 *
 * @example
 * ```ts
 * let out = '';
 * const code = await run(['validate', 'crew.yaml'], { stdout: { write: (s: string) => (out += s) } });
 * code;  // 0
 * out;   // 'crew.yaml: valid crew: 3 agents, 3 signals, 1 parallel group, entry point "teacher"\n'
 * ```
 */
export async function run(argv: readonly string[], io: CliIo = {}): Promise<ExitCode> {
  const env = io.env ?? process.env;
  const stdout: CliOutput = io.stdout ?? process.stdout;
  const stderr: CliOutput = io.stderr ?? process.stderr;
  const ctx: CommandContext = {
    stdout,
    stderr,
    out: styleFor(stdout, env),
    err: styleFor(stderr, env),
    cwd: io.cwd ?? process.cwd(),
    env,
  };
  try {
    if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
      throw new CliUsageError({
        message: 'run(argv): expected argv as an array of strings (the arguments after the program name)',
      });
    }
    if (argv.length === 0) {
      throw new CliUsageError({ message: `missing command: ${COMMAND_LIST} (see 'signalyard --help')` });
    }
    const [first, second] = argv;
    if (first === 'help' && second !== undefined && !second.startsWith('-') && !COMMANDS.has(second)) {
      // Commander would print the whole help on stderr; one line says it better.
      throw new CliUsageError({
        message: `unknown command ${describeValue(second)}: expected ${COMMAND_LIST} (see 'signalyard --help')`,
      });
    }
    if (first === 'route' && argv.length === 1) {
      // Commander would print the route command's help on stderr; one line says it better.
      throw new CliUsageError({ message: "missing subcommand: explain (see 'signalyard route --help')" });
    }
    if (first === 'mcp' && argv.length === 1) {
      throw new CliUsageError({ message: "missing subcommand: serve (see 'signalyard mcp --help')" });
    }
    if (first === 'inbox' && argv.length === 1) {
      throw new CliUsageError({ message: "missing subcommand: list or dead (see 'signalyard inbox --help')" });
    }
    if (first === 'cassettes' && argv.length === 1) {
      throw new CliUsageError({ message: "missing subcommand: export (see 'signalyard cassettes --help')" });
    }
    await buildProgram(ctx, io.abortSignal).parseAsync([...argv], { from: 'user' });
    return ExitCode.Ok;
  } catch (error) {
    return report(ctx, error, argv);
  }
}

function buildProgram(ctx: CommandContext, abortSignal: AbortSignal | undefined): Command {
  const program = new Command('signalyard');
  program
    .description(
      'Validate Signalyard configurations, graph a crew, resolve and explain a route, inspect and time-travel sessions, open the inspector page, decide a held tool call (approve), serve agents over MCP (mcp serve), list what waits in a durable inbox (inbox list|dead), settle it (worker), export cassettes, replay and score them (replay, eval).',
    )
    .version(version(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .exitOverride()
    // Program options (-V/--version, -h/--help) only before the command, so `sessions fork --version 3` is the fork's.
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
      outputError: () => undefined, // reported as one line by `report`
      getOutHelpWidth: () => ctx.stdout.columns ?? 80,
      getErrHelpWidth: () => ctx.stderr.columns ?? 80,
      getOutHasColors: () => ctx.out.enabled,
      getErrHasColors: () => ctx.err.enabled,
    })
    .configureHelp({ styleTitle: (title) => ctx.out.bold(title) })
    .addHelpText(
      'after',
      `
Exit codes: 0 success, 1 configuration problems (each as file:line: path: message; validate prints them on stdout),
a session the store refused (one line on stderr), or a replay that diverged / an eval below its threshold, 2 usage errors, unreadable files and
unusable stores (one line on stderr). Colour only on a terminal; NO_COLOR turns it off.`,
    );

  addValidateCommand(program, ctx);
  addGraphCommand(program, ctx);
  addResolveCommand(program, ctx);
  addRouteCommand(program, ctx);
  addSessionsCommand(program, ctx);
  addInspectCommand(program, ctx, abortSignal);
  addApproveCommand(program, ctx);
  addMcpCommand(program, ctx, abortSignal);
  addInboxCommand(program, ctx);
  addWorkerCommand(program, ctx, abortSignal);
  addReplayCommands(program, ctx);
  return program;
}

/** `signalyard validate <file>`. */
function addValidateCommand(program: Command, ctx: CommandContext): void {
  program
    .command('validate')
    .description('check a crew.yaml or routing TOML and print every problem')
    .argument('<file>', 'the file to check')
    .addOption(
      new Option('--kind <kind>', 'what the file is (default: by extension, .yaml/.yml crew, .toml routing)').choices([
        'crew',
        'routing',
      ]),
    )
    .option('--strict', 'treat warnings (routing bindings that can never win) as problems: exit 1')
    .addHelpText(
      'after',
      `
Prints every problem as file:line: path: message on stdout and exits 1, or a one-line summary
on stdout and exits 0. A routing file's warnings (a binding that can never win: an earlier,
broader binding of the same tier takes every message it matches) come before the summary as
file:line: path: warning: message; they do not change the exit code unless --strict.

Examples:
  signalyard validate crew.yaml
  signalyard validate routing.toml --strict
  signalyard validate config.txt --kind routing`,
    )
    .action(async (file: string, options: ValidateOptions) => {
      await validateCommand(ctx, file, options);
    });
}

/** `signalyard graph <crew-file>`. */
function addGraphCommand(program: Command, ctx: CommandContext): void {
  program
    .command('graph')
    .description('draw a crew: agents, signal edges, parallel groups, terminations')
    .argument('<crew-file>', 'the crew.yaml to draw')
    .addOption(new Option('--format <format>', 'output format').choices(['mermaid', 'json']).default('mermaid'))
    .addHelpText(
      'after',
      `
Mermaid: a flowchart LR; signal edges are labelled with their marker, groups fan out (==>) and
hand over to next_agent, terminations lead to "end". JSON: { version, entryPoint, agents,
parallelGroups, edges, terminations } (see docs/cli.md).

Examples:
  signalyard graph crew.yaml > crew.mmd
  signalyard graph crew.yaml --format json`,
    )
    .action(async (file: string, options: { format: GraphFormat }) => {
      await graphCommand(ctx, file, options.format);
    });
}

/** The message options `resolve` and `route explain` share. */
function withRouteOptions(command: Command): Command {
  return command
    .requiredOption('--config <file>', 'the routing TOML')
    .requiredOption('--channel <channel>', 'the channel the message came in on (telegram, slack, cli, ...)')
    .option('--peer <kind:id>', 'who sent it: dm:<id>, group:<id>, channel:<id> or thread:<id> (none: a local session)')
    .option('--account <id>', 'the bot account that received it (default: "default")')
    .option('--guild <id>', 'the Discord guild')
    .option('--team <id>', 'the Slack team')
    .option('--thread <id>', 'the thread inside a group, channel or thread peer');
}

/** `signalyard resolve --config … --channel …`. */
function addResolveCommand(program: Command, ctx: CommandContext): void {
  withRouteOptions(
    program.command('resolve').description('show which agent and session an inbound message is routed to'),
  )
    .option('--json', 'print the resolution as JSON')
    .addHelpText(
      'after',
      `
Prints the agent, the session key, matchedBy (peer, guild, team, account, channel or default)
and the binding that matched (its index in routing.bindings and its agent).

Examples:
  signalyard resolve --config routing.toml --channel telegram --peer dm:123
  signalyard resolve --config routing.toml --channel slack --team T12345 --peer dm:user789
  signalyard resolve --config routing.toml --channel cli`,
    )
    .action(async (options: RouteOptions) => {
      await resolveCommand(ctx, options);
    });
}

/** `signalyard route explain --config … --channel …`. */
function addRouteCommand(program: Command, ctx: CommandContext): void {
  const route = program.command('route').description('explain how an inbound message is routed');
  withRouteOptions(
    route.command('explain').description('show the routing decision and why every binding on the channel won or lost'),
  )
    .option('--json', 'print the explanation as JSON')
    .addHelpText(
      'after',
      `
Prints what resolve prints (agent, session key, matchedBy, binding), then every binding on the
message's channel (bound to it or to any channel), in config order, with its tier and why it
won or lost: "won: ...", "matched, but bindings[i] ..." or "no match: ..." naming each
constraint the message fails.

Examples:
  signalyard route explain --config routing.toml --channel telegram --peer dm:123
  signalyard route explain --config routing.toml --channel slack --team T12345 --peer dm:user789 --json`,
    )
    .action(async (options: RouteOptions) => {
      await routeExplainCommand(ctx, options);
    });
}

/** The command `argv` runs (`'route explain'` for the subcommand), or `undefined`. */
function commandOf(argv: readonly unknown[]): string | undefined {
  if (!Array.isArray(argv)) return undefined;
  const at = argv.findIndex((a) => typeof a === 'string' && COMMANDS.has(a));
  const command = argv[at] as string | undefined;
  const sub: unknown = argv[at + 1];
  if (command === 'route' && sub === 'explain') return 'route explain';
  if (command === 'mcp' && sub === 'serve') return 'mcp serve';
  if (command === 'cassettes' && sub === 'export') return 'cassettes export';
  if (command === 'sessions' && typeof sub === 'string' && SESSIONS_SUBCOMMANDS.has(sub)) return `sessions ${sub}`;
  if (command === 'inbox' && typeof sub === 'string' && INBOX_SUBCOMMANDS.has(sub)) return `inbox ${sub}`;
  return command;
}

/** Reports a failure (`validate`'s problems on stdout, other commands' on stderr, everything else as one line on stderr) and returns its exit code. */
function report(ctx: CommandContext, error: unknown, argv: readonly unknown[]): ExitCode {
  const { stderr, err } = ctx;
  const line = (message: string): void => {
    stderr.write(`signalyard: ${err.red('error:')} ${terminalText(message.replace(/\s*[\r\n]+\s*/g, ' '))}\n`);
  };
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) return ExitCode.Ok; // --help, --version: already printed
    if (error.code === 'commander.help') return ExitCode.Usage; // help printed on stderr
    const command = commandOf(argv);
    const hint = command === undefined || command === 'help' ? 'signalyard --help' : `signalyard ${command} --help`;
    // Commander's message, one line: "unknown option '--knd'" + "(Did you mean --kind?)".
    const [first = '', ...rest] = error.message.replace(/^error: /, '').split(/\r?\n/);
    const more = rest.map((s) => s.trim().replace(/^\((.*)\)$/, '$1')).filter((s) => s !== '');
    // Commander ends some messages with a full stop ("Allowed choices are mermaid, json."): one
    // sentence then continues, so it goes.
    const said = `${first}${more.length === 0 ? '' : ` (${more.join(' ').replace(/^Did/, 'did')})`}`.replace(/\.$/, '');
    line(`${said}; see '${hint}'`);
    return ExitCode.Usage;
  }
  if (ConfigError.isInstance(error)) {
    // The problem list is what `validate` produces (as eslint and tsc do): stdout. For `graph`
    // and `resolve` it is an error on the way to their real output: stderr, so pipes stay clean.
    const file = error.file ?? '(config)';
    const command = commandOf(argv);
    const [stream, style] = command === 'validate' ? [ctx.stdout, ctx.out] : [stderr, err];
    for (const problem of error.problems) stream.write(`${formatProblem(file, problem, style)}\n`);
    return ExitCode.Problems;
  }
  if (CliSessionError.isInstance(error) || CliReplayError.isInstance(error) || isHistoryError(error)) {
    line(error.message);
    return ExitCode.Problems;
  }
  if (
    CliUsageError.isInstance(error) ||
    CliInputError.isInstance(error) ||
    CliStoreError.isInstance(error) ||
    CliConfigError.isInstance(error)
  ) {
    line(error.message);
    return ExitCode.Usage;
  }
  /* v8 ignore next 3 -- a bug, not an input: still one line and a non-zero exit */
  line(`unexpected ${SignalyardError.isInstance(error) ? error.code : 'failure'}: ${errorText(error)}`);
  return ExitCode.Usage;
}
