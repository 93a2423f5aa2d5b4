import type { AgentDiagrams, RunnerDescription } from '@signalyard/core';

// AgentDiagrams (core): the FSM is `FsmDefinition.toMermaid()` (its current state highlighted on
// the page), the crew `renderCrewMermaid(config)` of `@signalyard/cli` (as `signalyard graph`
// prints it, and as `crewEngine` draws it for `runner.describe()`), the pipeline `pipeline.toMermaid()`.
export type { AgentDiagrams };

/**
 * Each agent's diagrams: what `runner.describe()` says (read once, when first needed), with the
 * agents of the `diagrams` option overriding it.
 */
export class DiagramSource {
  readonly #given: ReadonlyMap<string, AgentDiagrams>;
  readonly #describe: (() => RunnerDescription) | undefined;
  #described: ReadonlyMap<string, AgentDiagrams> | undefined;

  constructor(given: ReadonlyMap<string, AgentDiagrams>, describe: (() => RunnerDescription) | undefined) {
    this.#given = given;
    this.#describe = describe;
  }

  /** The agent's diagrams, or `undefined` when nothing draws it. */
  get(agentId: string): AgentDiagrams | undefined {
    return this.#given.get(agentId) ?? this.#fromRunner().get(agentId);
  }

  #fromRunner(): ReadonlyMap<string, AgentDiagrams> {
    if (this.#described !== undefined) return this.#described;
    const described = new Map<string, AgentDiagrams>();
    try {
      for (const agent of this.#describe?.().agents ?? []) described.set(agent.id, agent.diagrams);
    } catch {
      // A runner that cannot describe itself (a strategy factory throwing): no diagrams from it.
    }
    this.#described = described;
    return described;
  }
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
