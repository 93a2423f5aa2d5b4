import { describeValue } from '@signalyard/core';
import { onAbort } from '@signalyard/core/internal';
import { Option, type Command } from 'commander';
import type { CommandContext } from './command-context.js';
import { CliUsageError } from './errors/cli-usage-error.js';
import { openConfiguredRunner } from './runner-config.js';
import { integerParser } from './sessions-command.js';

/** The environment variable `mcp serve --http` reads its bearer token from when `--token` is not given. */
const TOKEN_ENV = 'SIGNALYARD_MCP_TOKEN';

/** The options of `signalyard mcp serve`, as parsed. */
interface McpServeOptions {
  readonly config: string;
  readonly agents?: string;
  readonly stdio?: boolean;
  readonly http?: number;
  readonly host: string;
  readonly token?: string;
  readonly approvals?: boolean;
}

/** `signalyard mcp serve --config <module> (--stdio | --http <port>)`. */
export function addMcpCommand(program: Command, ctx: CommandContext, abortSignal: AbortSignal | undefined): void {
  const mcp = program.command('mcp').description("serve the app's agents to MCP clients (mcp serve)");
  mcp
    .command('serve')
    .description("serve agents of the app's runner (--config) as MCP tools ask_<agent>, over stdio or HTTP")
    .requiredOption(
      '--config <module>',
      "the app's runner configuration: a module whose default export is RunnerOptions or a function returning them (.ts through tsx)",
    )
    .option('--agents <ids>', "the agents to serve, comma-separated (default: every agent of the config's runner)")
    .option('--stdio', "speak MCP on this process's stdin/stdout (for a desktop or IDE client that starts it)")
    .addOption(
      new Option('--http <port>', 'serve Streamable HTTP (stateless) on this port (0: any free port)').argParser(
        integerParser(0, 'a port'),
      ),
    )
    .option('--host <address>', 'with --http: the address to listen on', '127.0.0.1')
    .option(
      '--token <token>',
      `with --http: every request must carry "authorization: Bearer <token>" (else 401); default: $${TOKEN_ENV}, which keeps the token out of the process list`,
    )
    .option('--approvals', 'also serve approve_<agent> { session, decisions } to decide paused turns')
    .addHelpText(
      'after',
      `
Builds the app's runner from --config and calls serveMcp(runner, { agents, stdio | http,
approvals }): each agent a is the tool ask_a { session?, text }, answered with the turn's visible
reply and { session, status, output?, pendingApprovals? }. Runs until Ctrl-C / SIGTERM (or, with
--stdio, until stdin closes), then closes the server and the runner. With --stdio, stdout carries
only the protocol: messages (and the config's console.log) go to stderr. Exit codes: 0 after a
clean stop, 2 for usage errors, unknown agents and configs that cannot load.

Examples:
  signalyard mcp serve --config runner.config.ts --stdio
  ${TOKEN_ENV}=… signalyard mcp serve --config dist/runner.config.js --http 8940 --agents support,billing`,
    )
    .action(async (options: McpServeOptions) => {
      await mcpServeCommand(ctx, options, abortSignal);
    });
}

/**
 * Checks the command line before anything loads: exactly one transport, --host/--token only with
 * --http, the agent list. Over HTTP without `--token`, the token is `$SIGNALYARD_MCP_TOKEN` when
 * set (ignored with --stdio, where no token applies).
 */
function transportOf(
  options: McpServeOptions,
  env: CommandContext['env'],
): { stdio: true } | { http: { port: number; host: string; token?: string } } {
  const http = options.http;
  if (options.stdio === true && http !== undefined) {
    throw new CliUsageError({ message: `pass one of --stdio or --http, not both (--http ${http})` });
  }
  if (options.stdio !== true && http === undefined) {
    throw new CliUsageError({ message: 'missing transport: pass --stdio or --http <port>' });
  }
  if (options.token === '') throw new CliUsageError({ message: '--token "": expected a non-empty bearer token' });
  if (http === undefined) {
    if (options.token !== undefined) throw new CliUsageError({ message: '--token applies to --http only' });
    return { stdio: true };
  }
  if (http > 65535) throw new CliUsageError({ message: `--http ${http}: expected a port, 0 to 65535` });
  if (options.host === '') throw new CliUsageError({ message: '--host "": expected an address such as 127.0.0.1' });
  const token = options.token ?? env[TOKEN_ENV];
  if (token === '')
    throw new CliUsageError({ message: `${TOKEN_ENV} is set but empty: expected a non-empty bearer token` });
  return { http: { port: http, host: options.host, ...(token !== undefined && { token }) } };
}

/** `--agents a,b` as a list; `undefined` when not given. */
function agentList(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const ids = text.split(',').map((s) => s.trim());
  if (ids.some((id) => id === '')) {
    throw new CliUsageError({ message: `--agents ${describeValue(text)}: expected agent ids separated by commas` });
  }
  return [...new Set(ids)];
}

/** Resolves when the process should stop: `abortSignal`, SIGINT / SIGTERM, or (stdio) the end of stdin. */
function untilStopped(abortSignal: AbortSignal | undefined, stdio: boolean): Promise<string> {
  return new Promise((resolve) => {
    const stops: (() => void)[] = [];
    const stop = (why: string): void => {
      for (const off of stops) off();
      resolve(why);
    };
    if (abortSignal !== undefined) {
      if (abortSignal.aborted) {
        stop('aborted');
        return;
      }
      onAbort(abortSignal, () => {
        stop('aborted');
      });
    }
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const on = (): void => {
        stop(signal);
      };
      process.on(signal, on);
      stops.push(() => process.off(signal, on));
    }
    if (stdio) {
      const on = (): void => {
        stop('stdin closed');
      };
      process.stdin.once('end', on).once('close', on);
      stops.push(() => process.stdin.off('end', on).off('close', on));
    }
  });
}

/** Sends `console.log` / `info` / `debug` to stderr while `fn` runs: stdout is the protocol's. */
async function withConsoleOnStderr<T>(fn: () => Promise<T>): Promise<T> {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = console.error;
  try {
    return await fn();
  } finally {
    Object.assign(console, saved);
  }
}

/**
 * Serves the config's agents over MCP until stopped, then closes the server and the runner.
 * Usage errors (transport, an agent the runner does not have, a port that cannot be bound) are
 * `CliUsageError`s (exit 2); nothing is left open.
 */
async function mcpServeCommand(
  ctx: CommandContext,
  options: McpServeOptions,
  abortSignal: AbortSignal | undefined,
): Promise<void> {
  const transport = transportOf(options, ctx.env);
  const requested = agentList(options.agents);
  const stdio = 'stdio' in transport;
  const serve = async (): Promise<void> => {
    const configured = await openConfiguredRunner(options.config, ctx.cwd);
    try {
      const { runner } = configured;
      const known = runner.describe().agents.map((a) => a.id);
      const agents = requested ?? known;
      const unknown = agents.filter((id) => !known.includes(id));
      if (unknown.length > 0) {
        throw new CliUsageError({
          message: `--agents: config ${describeValue(options.config)} has no agent ${unknown.map((id) => JSON.stringify(id)).join(', ')} (its agents: ${known.join(', ')})`,
        });
      }
      const { serveMcp, McpError } = await import('@signalyard/mcp');
      const served = await serveMcp(runner, { agents, ...transport, approvals: options.approvals === true }).catch(
        (error: unknown) => {
          if (McpError.isInstance(error)) throw new CliUsageError({ message: error.message, cause: error });
          throw error;
        },
      );
      const tools = agents.map((a) => `ask_${a}`).join(', ');
      if (served.url === undefined) {
        ctx.stderr.write(`mcp: serving ${tools} over stdio (until stdin closes or Ctrl-C)\n`);
      } else {
        ctx.stdout.write(`mcp: ${served.url}\n(serving ${tools}; Ctrl-C stops it)\n`);
      }
      const why = await untilStopped(abortSignal, stdio);
      ctx.stderr.write(`mcp: stopping (${why})\n`);
      await served.close();
    } finally {
      await configured.close();
    }
  };
  await (stdio ? withConsoleOnStderr(serve) : serve());
}
