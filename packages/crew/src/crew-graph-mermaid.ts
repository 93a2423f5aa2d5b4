import type { CrewGraph } from './crew-graph.js';

/**
 * Text for a quoted Mermaid label: characters the Mermaid lexer reads specially become entity
 * codes, line breaks become spaces.
 */
function label(text: string): string {
  const escaped = text
    .replace(/#/g, '#35;')
    .replace(/"/g, '#quot;')
    .replace(/</g, '#lt;')
    .replace(/>/g, '#gt;')
    .replace(/\|/g, '#124;')
    .replace(/`/g, '#96;')
    .replace(/[\r\n\t]+/g, ' ');
  return `"${escaped}"`;
}

/**
 * The label of a routing signal's edge: its marker (`marker` mode), the transfer tool the model
 * calls (`tool`), or both (`[BILLING] or transfer_to_billing`).
 */
function handoffLabel(
  mode: CrewGraph['handoffMode'],
  edge: { readonly signal: string; readonly tool?: string | undefined },
): string {
  if (mode === 'marker' || edge.tool === undefined) return edge.signal;
  return mode === 'tool' ? edge.tool : `${edge.signal} or ${edge.tool}`;
}

/**
 * The diagram's title when the crew does not hand off by marker from its entry point each time
 * (the defaults draw no title): how models hand off, and where a new message starts.
 */
function titleOf(graph: CrewGraph): string | undefined {
  const parts: string[] = [];
  if (graph.handoffMode === 'tool') parts.push('handoffs: transfer tools');
  if (graph.handoffMode === 'both') parts.push('handoffs: markers or transfer tools');
  if (graph.resumeAt === 'last_agent') parts.push('a new message resumes at the last agent');
  return parts.length === 0 ? undefined : parts.join(' · ');
}

/** The lines of one agent, by kind, in the order they are printed. */
interface AgentLines {
  readonly signals: string[];
  readonly terminations: string[];
  readonly fallbacks: string[];
  readonly behaviors: string[];
}

/**
 * Draws a {@link CrewGraph} (from {@link buildCrewGraph}) as a Mermaid `flowchart LR`. The text
 * is deterministic (same graph, same characters), so it can be committed and diffed.
 *
 * Nodes: `start` (a circle) points at the entry agent; agents are rectangles `a0`, `a1`, … in crew
 * order, labelled with their id (and name); parallel groups are hexagons `g0`, … in declaration
 * order, labelled with their name, `wait for all` or `first success`, and their timeout; `stop`
 * (a double circle) is the end of a run, `pause` (a stadium) a paused run — each only when used.
 * A crew that hands off by tool, or resumes at the last agent, gets a Mermaid front-matter
 * `title` saying so (`handoffs: transfer tools · a new message resumes at the last agent`); the
 * defaults draw none. Node ids never come from user text, so any agent or group name is safe;
 * labels escape what
 * Mermaid reads specially (`"`, `#`, `<`, `>`, `|`, backticks) as entity codes and turn line
 * breaks into spaces.
 *
 * Edges, in {@link CrewGraph} order: `-->` a routing signal, labelled with its marker — with
 * `handoffMode: 'tool'` the transfer tool the model calls instead (`transfer_to_student`), with
 * `'both'` both (`[ASK] or transfer_to_student`); `-->` to `stop`, a termination signal, labelled
 * the same way; `-.->` a fallback (`handoff_targets`);
 * `==>` a group's fan-out to each member; `-->` labelled `next_agent` after a group; `-.->` to
 * `stop` labelled `is_terminal`, and to `pause` labelled `wait_for_signal`.
 *
 * The graph must be one {@link buildCrewGraph} built (every agent and group an edge names is in
 * it).
 *
 * @example
 * ```ts
 * crewGraphMermaid(
 *   buildCrewGraph({
 *     entryPoint: 'teacher',
 *     agents: [{ id: 'teacher' }, { id: 'student' }],
 *     routing: { signals: { teacher: [{ signal: '[ASK]', target: 'student' }], student: [{ signal: '[DONE]', target: '' }] } },
 *   }),
 * );
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
export function crewGraphMermaid(graph: CrewGraph): string {
  const ids = new Map<string, string>();
  const nodes: string[] = ['    start(("start"))'];
  const perAgent = new Map<string, AgentLines>();
  graph.agents.forEach((agent, i) => {
    ids.set(agent.id, `a${i}`);
    perAgent.set(agent.id, { signals: [], terminations: [], fallbacks: [], behaviors: [] });
    const text = agent.name === undefined || agent.name === agent.id ? agent.id : `${agent.id} (${agent.name})`;
    nodes.push(`    a${i}[${label(text)}]`);
  });
  graph.parallelGroups.forEach((group, i) => {
    ids.set(group.id, `g${i}`);
    const mode = group.waitForAll ? 'wait for all' : 'first success';
    nodes.push(`    g${i}{{${label(`${group.id} (${mode}, ${group.timeoutSeconds}s)`)}}}`);
  });
  const ref = (name: string): string => ids.get(name) as string;
  const linesOf = (agent: string): AgentLines => perAgent.get(agent) as AgentLines;

  const mode = graph.handoffMode;
  const groupLines: string[] = [];
  for (const edge of graph.edges) {
    const from = ref(edge.from);
    const to = ref(edge.to);
    switch (edge.kind) {
      case 'signal':
        linesOf(edge.from).signals.push(`    ${from} -->|${label(handoffLabel(mode, edge))}| ${to}`);
        break;
      case 'fallback':
        linesOf(edge.from).fallbacks.push(`    ${from} -.->|${label('fallback')}| ${to}`);
        break;
      case 'fan_out':
        groupLines.push(`    ${from} ==>|${label('fan-out')}| ${to}`);
        break;
      case 'next_agent':
        groupLines.push(`    ${from} -->|${label('next_agent')}| ${to}`);
        break;
    }
  }
  let usesStop = false;
  for (const t of graph.terminations) {
    usesStop = true;
    if (t.kind === 'signal')
      linesOf(t.agent).terminations.push(`    ${ref(t.agent)} -->|${label(handoffLabel(mode, t))}| stop`);
    else linesOf(t.agent).behaviors.push(`    ${ref(t.agent)} -.->|${label('is_terminal')}| stop`);
  }
  let usesPause = false;
  for (const agent of graph.agents) {
    if (agent.waitForSignal) {
      usesPause = true;
      linesOf(agent.id).behaviors.push(`    ${ref(agent.id)} -.->|${label('wait_for_signal')}| pause`);
    }
  }
  if (usesStop) nodes.push('    stop((("end")))');
  if (usesPause) nodes.push('    pause(["paused"])');

  const title = titleOf(graph);
  const lines = [
    ...(title === undefined ? [] : ['---', `title: ${label(title)}`, '---']),
    'flowchart LR',
    ...nodes,
    `    start --> ${ref(graph.entryPoint)}`,
  ];
  for (const agent of graph.agents) {
    const own = linesOf(agent.id);
    lines.push(...own.signals, ...own.terminations, ...own.fallbacks, ...own.behaviors);
  }
  lines.push(...groupLines);
  return `${lines.join('\n')}\n`;
}
