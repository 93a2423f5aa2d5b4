import type { CrewConfig, CrewConfigInput } from '@signalyard/crew';
import { crewGraphMermaid } from '@signalyard/core/internal';
import { buildCrewGraph } from './crew-graph.js';

/**
 * Renders a crew as a Mermaid `flowchart LR`. The text is deterministic (same crew, same
 * characters), so it can be committed and diffed.
 *
 * Nodes: `start` (a circle) points at the entry agent; agents are rectangles `a0`, `a1`, … in crew
 * order, labelled with their id (and name); parallel groups are hexagons `g0`, … in declaration
 * order, labelled with their name, `wait for all` or `first success`, and their timeout; `stop`
 * (a double circle) is the end of a run, `pause` (a stadium) a paused run — each only when used.
 * Node ids never come from user text, so any agent or group name is safe.
 *
 * Edges, in {@link CrewGraph} order: `-->` a routing signal, labelled with its marker; `-->` to
 * `stop`, a termination signal, labelled with its marker; `-.->` a fallback (`handoff_targets`);
 * `==>` a group's fan-out to each member; `-->` labelled `next_agent` after a group; `-.->` to
 * `stop` labelled `is_terminal`, and to `pause` labelled `wait_for_signal`.
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
