/** The Mermaid texts of one agent's diagrams, as the packages export them. */
export interface AgentDiagrams {
  /** The agent's FSM: `FsmDefinition.toMermaid()` (`@signalyard/fsm`). The session's current state is highlighted. */
  readonly fsm?: string;
  /** The agent's crew: `renderCrewMermaid(config)` (`@signalyard/cli`, as `signalyard graph` prints it). */
  readonly crew?: string;
  /** The agent's pipeline: `pipeline.toMermaid()` (`@signalyard/pipeline`). */
  readonly pipeline?: string;
}

const PLAIN = /^[A-Za-z0-9_]+$/;

/**
 * The FSM diagram with `state` drawn as the current one (a `current` class), or the diagram
 * as it is when `state` is not one of its states. Works on the `stateDiagram-v2` text of
 * `@signalyard/fsm`: a plain state name is its own id, any other is declared `state "…" as sN`.
 */
export function highlightFsmState(mermaid: string, state: string): string {
  const lines = mermaid.split('\n');
  if (!lines[0]?.trim().startsWith('stateDiagram')) return mermaid;
  let id: string | undefined;
  if (PLAIN.test(state)) {
    const used = new RegExp(`(^|\\s)${state}(\\s|$)`);
    if (lines.slice(1).some((line) => used.test(line))) id = state;
  } else {
    const declared = `state "${state.replace(/"/g, '#quot;').replace(/[\r\n]+/g, ' ')}" as `;
    const line = lines.find((l) => l.trim().startsWith(declared));
    id = line?.trim().slice(declared.length).trim();
  }
  if (id === undefined || !PLAIN.test(id)) return mermaid;
  return `${mermaid}\n    classDef current fill:#fde68a,stroke:#b45309,stroke-width:3px,font-weight:bold\n    class ${id} current`;
}

/** An agent's diagrams for the page: the FSM with `currentState` highlighted when there is one. */
export function diagramsFor(diagrams: AgentDiagrams | undefined, currentState: string | undefined): AgentDiagrams {
  if (diagrams === undefined) return {};
  const { fsm, crew, pipeline } = diagrams;
  return {
    ...(fsm !== undefined && { fsm: currentState === undefined ? fsm : highlightFsmState(fsm, currentState) }),
    ...(crew !== undefined && { crew }),
    ...(pipeline !== undefined && { pipeline }),
  };
}
