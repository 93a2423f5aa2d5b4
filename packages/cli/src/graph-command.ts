import { extname } from 'node:path';
import { describeValue } from '@signalyard/core';
import type { CommandContext } from './command-context.js';
import { buildCrewGraph, crewGraphMermaid } from '@signalyard/crew';
import { CliUsageError } from './errors/cli-usage-error.js';
import { loadCrew } from './load-config.js';

/** The output formats of `signalyard graph`. */
export type GraphFormat = 'mermaid' | 'json';

/**
 * `signalyard graph <crew.yaml> [--format mermaid|json]`: prints the crew's graph on stdout
 * (`buildCrewGraph` and `crewGraphMermaid` of `@signalyard/crew`). Problems and unreadable files are thrown for `run` to report.
 */
export async function graphCommand(ctx: CommandContext, file: string, format: GraphFormat): Promise<void> {
  if (extname(file).toLowerCase() === '.toml') {
    throw new CliUsageError({
      message: `${describeValue(file)} looks like a routing file: graph draws a crew (crew.yaml)`,
    });
  }
  const graph = buildCrewGraph(await loadCrew(file, ctx.cwd));
  ctx.stdout.write(format === 'json' ? `${JSON.stringify(graph, null, 2)}\n` : crewGraphMermaid(graph));
}
