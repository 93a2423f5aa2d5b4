import { buildCrewGraph, crewGraphMermaid, type CrewConfig, type CrewConfigInput } from '@signalyard/crew';

/**
 * Renders a crew as a Mermaid `flowchart LR`: `crewGraphMermaid(buildCrewGraph(crew))` of
 * `@signalyard/crew` (which describes the nodes and edges), in one call. The text is
 * deterministic (same crew, same characters), so it can be committed and diffed; it is what
 * `signalyard graph <crew.yaml>` prints.
 *
 * @throws ConfigError (`CONFIG_INVALID`) listing every problem when `crew` is not a valid crew.
 * @example
 * ```ts
 * renderCrewMermaid({
 *   entryPoint: 'teacher',
 *   agents: [{ id: 'teacher' }, { id: 'student' }],
 *   routing: { signals: { teacher: [{ signal: '[ASK]', target: 'student' }], student: [{ signal: '[DONE]', target: '' }] } },
 * });
 * // flowchart LR
 * //     start(("start"))
 * //     a0["teacher"]
 * //     a1["student"]
 * //     stop((("end")))
 * //     start --> a0
 * //     a0 -->|"[ASK]"| a1
 * //     a1 -->|"[DONE]"| stop
 * ```
 */
export function renderCrewMermaid(crew: CrewConfig | CrewConfigInput): string {
  return crewGraphMermaid(buildCrewGraph(crew));
}
