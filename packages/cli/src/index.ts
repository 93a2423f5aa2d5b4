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
export { buildCrewGraph } from './crew-graph.js';
export type { CrewGraph, CrewGraphAgent, CrewGraphEdge, CrewGraphGroup, CrewGraphTermination } from './crew-graph.js';
export { renderCrewMermaid } from './crew-mermaid.js';
