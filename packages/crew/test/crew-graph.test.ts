import { ConfigError } from '@signalyard/core';
import {
  buildCrewGraph,
  crewGraphMermaid,
  parseCrewConfig,
  resolveCrewConfig,
  type CrewConfig,
  type CrewConfigInput,
  type CrewGraph,
  type CrewGraphAgent,
  type CrewGraphEdge,
  type CrewGraphGroup,
  type CrewGraphTermination,
} from '@signalyard/crew';
import { thrown } from '@signalyard/test-utils';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';

/** The graph drawn: what `signalyard graph` prints. */
const draw = (crew: CrewConfigInput): string => crewGraphMermaid(buildCrewGraph(crew));

/**
 * A support desk with every kind of edge and ending: triage routes to billing, to a parallel
 * group of experts (first success, continuing at triage) or ends; billing pauses and falls back
 * to triage; tech is terminal.
 */
const desk = parseCrewConfig(`
entry_point: triage
agents:
  - id: triage
    name: Front desk
    handoff_targets: [triage, billing, tech]
  - id: billing
    handoff_targets: [triage]
  - id: tech
    name: tech
routing:
  signals:
    triage:
      - { signal: "[BILLING]", target: billing }
      - { signal: "[BYE]", target: "", description: "customer done" }
      - { signal: "[EXPERTS]", target: experts, description: "ask both" }
  agent_behaviors:
    billing: { wait_for_signal: true }
    tech: { is_terminal: true }
  parallel_groups:
    experts: { agents: [tech, billing], wait_for_all: false, timeout_seconds: 10, next_agent: triage }
`);

/** The graph of the desk: agents and groups in declaration order, each agent's edges together. */
const DESK_GRAPH = {
  version: 1,
  entryPoint: 'triage',
  handoffMode: 'marker',
  resumeAt: 'entry',
  agents: [
    { id: 'triage', name: 'Front desk', entry: true, waitForSignal: false, isTerminal: false },
    { id: 'billing', entry: false, waitForSignal: true, isTerminal: false },
    { id: 'tech', name: 'tech', entry: false, waitForSignal: false, isTerminal: true },
  ],
  parallelGroups: [
    { id: 'experts', agents: ['tech', 'billing'], waitForAll: false, timeoutSeconds: 10, nextAgent: 'triage' },
  ],
  edges: [
    { kind: 'signal', from: 'triage', to: 'billing', toKind: 'agent', signal: '[BILLING]' },
    {
      kind: 'signal',
      from: 'triage',
      to: 'experts',
      toKind: 'parallel_group',
      signal: '[EXPERTS]',
      description: 'ask both',
    },
    { kind: 'fallback', from: 'triage', to: 'billing', order: 1 },
    { kind: 'fallback', from: 'triage', to: 'tech', order: 2 },
    { kind: 'fallback', from: 'billing', to: 'triage', order: 0 },
    { kind: 'fan_out', from: 'experts', to: 'tech' },
    { kind: 'fan_out', from: 'experts', to: 'billing' },
    { kind: 'next_agent', from: 'experts', to: 'triage' },
  ],
  terminations: [
    { kind: 'signal', agent: 'triage', signal: '[BYE]', description: 'customer done' },
    { kind: 'terminal_agent', agent: 'tech' },
  ],
};

/** The desk drawn: an agent's lines are its signals, terminations, fallbacks, behaviours; groups last. */
const DESK_MERMAID = `flowchart LR
    start(("start"))
    a0["triage (Front desk)"]
    a1["billing"]
    a2["tech"]
    g0{{"experts (first success, 10s)"}}
    stop((("end")))
    pause(["paused"])
    start --> a0
    a0 -->|"[BILLING]"| a1
    a0 -->|"[EXPERTS]"| g0
    a0 -->|"[BYE]"| stop
    a0 -.->|"fallback"| a1
    a0 -.->|"fallback"| a2
    a1 -.->|"fallback"| a0
    a1 -.->|"wait_for_signal"| pause
    a2 -.->|"is_terminal"| stop
    g0 ==>|"fan-out"| a2
    g0 ==>|"fan-out"| a1
    g0 -->|"next_agent"| a0
`;

function configError(fn: () => unknown): ConfigError {
  const error = thrown(fn);
  expect(ConfigError.isInstance(error)).toBe(true);
  return error as ConfigError;
}

/** The desk handing off by transfer tool (or both), resuming at the last agent. */
const deskIn = (mode: 'tool' | 'both'): CrewConfig =>
  resolveCrewConfig({ ...desk, settings: { ...desk.settings, handoffMode: mode, resumeAt: 'last_agent' } });

describe('the handoff mode in the graph', () => {
  it('the graph says how models hand off and where a new message starts; signal edges name their transfer tool', () => {
    const graph = buildCrewGraph(deskIn('tool'));
    expect(graph).toMatchObject({ handoffMode: 'tool', resumeAt: 'last_agent' });
    expect(graph.edges.filter((e) => e.kind === 'signal')).toEqual([
      {
        kind: 'signal',
        from: 'triage',
        to: 'billing',
        toKind: 'agent',
        signal: '[BILLING]',
        tool: 'transfer_to_billing',
      },
      {
        kind: 'signal',
        from: 'triage',
        to: 'experts',
        toKind: 'parallel_group',
        signal: '[EXPERTS]',
        tool: 'transfer_to_experts',
        description: 'ask both',
      },
    ]);
    expect(graph.terminations[0]).toEqual({
      kind: 'signal',
      agent: 'triage',
      signal: '[BYE]',
      tool: 'finish',
      description: 'customer done',
    });
  });

  it('the diagram labels handoffs with the tool the model calls (both: marker or tool) and titles the mode', () => {
    const tool = crewGraphMermaid(buildCrewGraph(deskIn('tool')));
    expect(tool.split('\n').slice(0, 4)).toEqual([
      '---',
      'title: "handoffs: transfer tools · a new message resumes at the last agent"',
      '---',
      'flowchart LR',
    ]);
    expect(tool).toContain('    a0 -->|"transfer_to_billing"| a1\n');
    expect(tool).toContain('    a0 -->|"transfer_to_experts"| g0\n');
    expect(tool).toContain('    a0 -->|"finish"| stop\n');
    const both = crewGraphMermaid(buildCrewGraph(deskIn('both')));
    expect(both).toContain('title: "handoffs: markers or transfer tools · a new message resumes at the last agent"');
    expect(both).toContain('    a0 -->|"[BILLING] or transfer_to_billing"| a1\n');
    // The body is the marker diagram's, relabelled.
    expect(
      tool
        .replace(/^---\n.*\n---\n/, '')
        .replaceAll(/transfer_to_(\w+)/g, (_, t: string) => `[${t.toUpperCase()}]`)
        .replace('"finish"', '"[BYE]"'),
    ).toBe(DESK_MERMAID);
    const resumesOnly = resolveCrewConfig({ ...desk, settings: { resumeAt: 'last_agent' } });
    expect(crewGraphMermaid(buildCrewGraph(resumesOnly)).split('\n')[1]).toBe(
      'title: "a new message resumes at the last agent"',
    );
  });
});

describe('buildCrewGraph', () => {
  it('agents, the parallel group, signal, fan-out, next_agent and fallback edges, terminations, in order', () => {
    expect(buildCrewGraph(desk)).toEqual(DESK_GRAPH);
  });

  it('a resolved crew is used as it is; the graph is the same for the same crew, every time', () => {
    expect(buildCrewGraph(desk)).toEqual(buildCrewGraph(desk));
    expect(JSON.parse(JSON.stringify(buildCrewGraph(desk)))).toEqual(DESK_GRAPH);
  });

  it('accepts a crew written in code (validated with the crew.yaml rules)', () => {
    const graph = buildCrewGraph({
      entryPoint: 'a',
      agents: [{ id: 'a' }, { id: 'b' }],
      routing: { signals: { a: [{ signal: '[GO]', target: 'b' }] }, agentBehaviors: { b: { waitForSignal: true } } },
    });
    expect(graph).toEqual({
      version: 1,
      entryPoint: 'a',
      handoffMode: 'marker',
      resumeAt: 'entry',
      agents: [
        { id: 'a', entry: true, waitForSignal: false, isTerminal: false },
        { id: 'b', entry: false, waitForSignal: true, isTerminal: false },
      ],
      parallelGroups: [],
      edges: [{ kind: 'signal', from: 'a', to: 'b', toKind: 'agent', signal: '[GO]' }],
      terminations: [],
    });
  });

  it('an invalid crew: ConfigError (CONFIG_INVALID) listing every problem', () => {
    const error = configError(() =>
      buildCrewGraph({
        entryPoint: 'nobody',
        agents: [{ id: 'a' }],
        routing: { signals: { a: [{ signal: 'GO', target: 'x' }] } },
      }),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.problems.map((p) => p.path).sort()).toEqual([
      'entryPoint',
      'routing.signals.a[0].signal',
      'routing.signals.a[0].target',
    ]);
    expect(configError(() => buildCrewGraph(null as unknown as CrewConfigInput)).code).toBe('CONFIG_INVALID');
  });

  it('fallback edges keep handoff_targets order, skipping the agent itself and repeats', () => {
    const graph = buildCrewGraph({
      entryPoint: 'a',
      agents: [{ id: 'a', handoffTargets: ['a', 'c', 'b', 'c'] }, { id: 'b' }, { id: 'c' }],
    });
    expect(graph.edges).toEqual([
      { kind: 'fallback', from: 'a', to: 'c', order: 1 },
      { kind: 'fallback', from: 'a', to: 'b', order: 2 },
    ]);
  });

  it('a group without next_agent, first-success, with the settings timeout', () => {
    const graph = buildCrewGraph({
      entryPoint: 'a',
      agents: [{ id: 'a' }, { id: 'b' }],
      settings: { parallelTimeoutSeconds: 2.5 },
      routing: { parallelGroups: { both: { agents: ['b', 'a'], waitForAll: false } } },
    });
    expect(graph.parallelGroups).toEqual([{ id: 'both', agents: ['b', 'a'], waitForAll: false, timeoutSeconds: 2.5 }]);
    expect(graph.edges).toEqual([
      { kind: 'fan_out', from: 'both', to: 'b' },
      { kind: 'fan_out', from: 'both', to: 'a' },
    ]);
  });

  it('regression: edges and group members follow declaration order (the Go source iterated maps in random order)', () => {
    const agents = ['z', 'm', 'a', 'q'].map((id) => ({ id }));
    const crew: CrewConfigInput = {
      entryPoint: 'q',
      agents,
      routing: {
        signals: {
          a: [
            { signal: '[TO_Z]', target: 'z' },
            { signal: '[TO_G2]', target: 'g2' },
          ],
          z: [{ signal: '[TO_M]', target: 'm' }],
        },
        parallelGroups: { g2: { agents: ['q', 'a', 'z'] }, g1: { agents: ['m'] } },
      },
    };
    const graph = buildCrewGraph(crew);
    expect(graph.agents.map((a) => a.id)).toEqual(['z', 'm', 'a', 'q']);
    expect(graph.parallelGroups.map((g) => g.id)).toEqual(['g2', 'g1']);
    expect(graph.edges.map((e) => `${e.kind}:${e.from}>${e.to}`)).toEqual([
      'signal:z>m',
      'signal:a>z',
      'signal:a>g2',
      'fan_out:g2>q',
      'fan_out:g2>a',
      'fan_out:g2>z',
      'fan_out:g1>m',
    ]);
  });

  it('keeps signal descriptions on edges and terminations', () => {
    const graph = buildCrewGraph({
      entryPoint: 'a',
      agents: [{ id: 'a' }],
      routing: { signals: { a: [{ signal: '[STOP]', target: '', description: 'done' }] } },
    });
    expect(graph.terminations).toEqual([{ kind: 'signal', agent: 'a', signal: '[STOP]', description: 'done' }]);
  });
});

describe('crewGraphMermaid', () => {
  it('draws every kind of node and edge, exactly', () => {
    expect(crewGraphMermaid(buildCrewGraph(desk))).toBe(DESK_MERMAID);
  });

  it('draws pause and first-success groups, and leaves out end and pause nodes nothing uses', () => {
    const text = draw({
      entryPoint: 'a',
      agents: [{ id: 'a', name: 'a' }, { id: 'b' }],
      settings: { parallelTimeoutSeconds: 0.5 },
      routing: {
        agentBehaviors: { b: { waitForSignal: true } },
        parallelGroups: { g: { agents: ['b'], waitForAll: false } },
      },
    });
    expect(text).toBe(`flowchart LR
    start(("start"))
    a0["a"]
    a1["b"]
    g0{{"g (first success, 0.5s)"}}
    pause(["paused"])
    start --> a0
    a1 -.->|"wait_for_signal"| pause
    g0 ==>|"fan-out"| a1
`);
    expect(text).not.toContain('stop');
  });

  it('escapes what Mermaid reads specially in names and markers', () => {
    const text = draw({
      entryPoint: 'say "hi"',
      agents: [{ id: 'say "hi"', name: 'A <b>|#1|</b>\n`x`' }, { id: 'end' }],
      routing: { signals: { 'say "hi"': [{ signal: '[A "B" #C]', target: 'end' }] } },
    });
    expect(text).toContain('    a0["say #quot;hi#quot; (A #lt;b#gt;#124;#35;1#124;#lt;/b#gt; #96;x#96;)"]');
    expect(text).toContain('    a1["end"]');
    expect(text).toContain('    a0 -->|"[A #quot;B#quot; #35;C]"| a1');
  });

  /** Two markers the crew rules call duplicates (they match the same replies). */
  const sameMarker = (m: string): string => m.slice(1, -1).normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();

  it('property: any agent ids and markers give well-formed, deterministic lines with generated node ids', () => {
    const id = fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' });
    const marker = fc
      .string({ minLength: 1, maxLength: 10 })
      .filter((s) => !/[[\]]/.test(s) && s.trim() !== '')
      .map((s) => `[${s}]`);
    fc.assert(
      fc.property(
        fc.uniqueArray(id, { minLength: 1, maxLength: 5 }),
        fc.uniqueArray(marker, { maxLength: 4, selector: sameMarker }),
        (ids, markers) => {
          const [first] = ids as [string, ...string[]];
          const crew: CrewConfigInput = {
            entryPoint: first,
            agents: ids.map((agentId) => ({ id: agentId, handoffTargets: ids })),
            routing: {
              signals: {
                [first]: markers.map((signal, i) => ({
                  signal,
                  target: i === 0 ? '' : (ids[i % ids.length] as string),
                })),
              },
            },
          };
          const text = draw(crew);
          expect(draw(crew)).toBe(text);
          const body = text.split('\n').slice(1, -1);
          for (const line of body) {
            expect(line).toMatch(
              /^ {4}(?:(?:start|stop|pause|[ag]\d+)(?:\(\("[^"]*"\)\)|\(\(\("[^"]*"\)\)\)|\(\["[^"]*"\]\)|\["[^"\n]*"\]|\{\{"[^"]*"\}\})|(?:start|[ag]\d+) (?:-->|-\.->|==>)(?:\|"[^"|<>#`\n]*(?:#\w+;[^"|<>#`\n]*)*"\|)? (?:stop|pause|[ag]\d+))$/,
            );
          }
        },
      ),
    );
  });
});

describe('crew graph types', () => {
  it('buildCrewGraph takes a parsed crew or one written in code; crewGraphMermaid draws its result', () => {
    expectTypeOf(buildCrewGraph).parameters.toEqualTypeOf<[crew: CrewConfig | CrewConfigInput]>();
    expectTypeOf(crewGraphMermaid).parameters.toEqualTypeOf<[graph: CrewGraph]>();
    expectTypeOf(crewGraphMermaid).returns.toEqualTypeOf<string>();
    expectTypeOf<CrewGraph['agents'][number]>().toEqualTypeOf<CrewGraphAgent>();
    expectTypeOf<CrewGraph['parallelGroups'][number]>().toEqualTypeOf<CrewGraphGroup>();
    expectTypeOf<CrewGraph['edges'][number]>().toEqualTypeOf<CrewGraphEdge>();
    expectTypeOf<CrewGraph['terminations'][number]>().toEqualTypeOf<CrewGraphTermination>();
  });
});
