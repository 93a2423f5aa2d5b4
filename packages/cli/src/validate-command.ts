import { ConfigError, describeValue } from '@signalyard/core';
import type { CommandContext } from './command-context.js';
import { count } from './command-context.js';
import { formatWarning } from './format-problems.js';
import { configKindOf, lintRouting, parseCrew, type ConfigKind } from './load-config.js';
import { readTextFile } from './read-input.js';

/** The options of `signalyard validate`. */
export interface ValidateOptions {
  readonly kind?: ConfigKind;
  /** Warnings (bindings that can never win) are problems: printed as such, exit 1. */
  readonly strict?: boolean;
}

/**
 * `signalyard validate <file> [--kind crew|routing] [--strict]`: parses the file and prints a
 * one-line summary on stdout, after a routing file's warnings (bindings that can never win), one
 * per line. Problems, unreadable files, and with `--strict` warnings, are thrown for `run` to
 * report.
 */
export async function validateCommand(ctx: CommandContext, file: string, options: ValidateOptions): Promise<void> {
  // Read first: a directory or a missing file is reported as such, whatever its name says.
  const text = await readTextFile(file, ctx.cwd);
  const kind = configKindOf(file, options.kind);
  const valid = ctx.out.green('valid');
  if (kind === 'crew') {
    const crew = parseCrew(file, text);
    let signals = 0;
    for (const list of Object.values(crew.routing.signals)) signals += list.length;
    const facts = [
      count(crew.agents.length, 'agent'),
      count(signals, 'signal'),
      count(Object.keys(crew.routing.parallelGroups).length, 'parallel group'),
      `entry point ${describeValue(crew.entryPoint)}`,
    ];
    ctx.stdout.write(`${file}: ${valid} crew: ${facts.join(', ')}\n`);
  } else {
    const { config: routing, warnings } = lintRouting(file, text);
    if (options.strict === true && warnings.length > 0) {
      throw new ConfigError({
        file,
        problems: warnings.map(({ path, message, line }) =>
          line === undefined ? { path, message } : { path, message, line },
        ),
      });
    }
    for (const warning of warnings) ctx.stdout.write(`${formatWarning(file, warning, ctx.out)}\n`);
    const facts = [
      count(routing.bindings.length, 'binding'),
      count(Object.keys(routing.session.identityLinks).length, 'identity link'),
      `default agent ${describeValue(routing.defaultAgentId)}`,
      `dm_scope ${describeValue(routing.session.dmScope)}`,
    ];
    const warned = warnings.length === 0 ? '' : `; ${count(warnings.length, 'warning')}`;
    ctx.stdout.write(`${file}: ${valid} routing config: ${facts.join(', ')}${warned}\n`);
  }
}
