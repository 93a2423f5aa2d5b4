import { describeValue } from '@signalyard/core';
import type { CommandContext } from './command-context.js';
import { count } from './command-context.js';
import { configKindOf, loadCrew, loadRouting, type ConfigKind } from './load-config.js';

/**
 * `signalyard validate <file> [--kind crew|routing]`: parses the file and prints a one-line
 * summary on stdout . Problems and unreadable files are thrown for `run` to report.
 */
export async function validateCommand(
  ctx: CommandContext,
  file: string,
  kindOption: ConfigKind | undefined,
): Promise<void> {
  const kind = configKindOf(file, kindOption);
  const valid = ctx.out.green('valid');
  if (kind === 'crew') {
    const crew = await loadCrew(file, ctx.cwd);
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
    const routing = await loadRouting(file, ctx.cwd);
    const facts = [
      count(routing.bindings.length, 'binding'),
      count(Object.keys(routing.session.identityLinks).length, 'identity link'),
      `default agent ${describeValue(routing.defaultAgentId)}`,
      `dm_scope ${describeValue(routing.session.dmScope)}`,
    ];
    ctx.stdout.write(`${file}: ${valid} routing config: ${facts.join(', ')}\n`);
  }
}
