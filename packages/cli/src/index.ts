/**
 * `@signalyard/cli`: the `signalyard` command — validate crew.yaml and routing TOML files (with
 * warnings for routing bindings that can never win), graph a crew (Mermaid or JSON), and resolve
 * which agent and session an inbound message is routed to, or explain why (`route explain`).
 * The bin calls {@link run}; the same function runs the command in-process.
 *
 * @packageDocumentation
 */
export { ExitCode, run } from './run.js';
export type { CliIo, CliOutput } from './cli-io.js';
// The crew graph is `@signalyard/crew`'s; re-exported for the CLI's users (`signalyard graph` prints it).
export { buildCrewGraph } from '@signalyard/crew';
export type { CrewGraph, CrewGraphAgent, CrewGraphEdge, CrewGraphGroup, CrewGraphTermination } from '@signalyard/crew';
export { renderCrewMermaid } from './crew-mermaid.js';
