// crew.yaml's handoff settings: `handoff_mode`, `resume_at`, the names of transfer tools (and a
// signal's own `tool`), an agent's `description` — validated with every problem at once, each
// with its line.
import { describe, expect, it } from 'vitest';
import { ConfigError, type ConfigProblem } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, crewConfigSchema, parseCrewConfig, resolveCrewConfig } from '@signalyard/crew';
import { thrown } from '@signalyard/test-utils';

const yaml = (...lines: string[]): string => lines.join('\n') + '\n';

function problemsOf(fn: () => unknown): readonly ConfigProblem[] {
  const error = thrown(fn);
  expect(ConfigError.isInstance(error)).toBe(true);
  return (error as ConfigError).problems;
}

const DESK = [
  'entry_point: triage', // 1
  'agents:', // 2
  '  - id: triage', // 3
  '    description: First line of the desk', // 4
  '  - id: billing', // 5
  '    name: Billing', // 6
  '    tools: [refund, finish]', // 7
  '  - id: billing desk', // 8
];

describe('settings.handoff_mode and settings.resume_at', () => {
  it('default to marker and entry; read both spellings', () => {
    const base = yaml('entry_point: a', 'agents:', '  - id: a');
    expect(parseCrewConfig(base).settings).toMatchObject({ handoffMode: 'marker', resumeAt: 'entry' });
    for (const [mode, at] of [
      ['tool', 'last_agent'],
      ['both', 'entry'],
      ['marker', 'last_agent'],
    ] as const) {
      const crew = parseCrewConfig(`${base}settings:\n  handoff_mode: ${mode}\n  resume_at: ${at}\n`);
      expect(crew.settings).toMatchObject({ handoffMode: mode, resumeAt: at });
      expect(
        resolveCrewConfig({ entryPoint: 'a', agents: [{ id: 'a' }], settings: { handoffMode: mode, resumeAt: at } })
          .settings,
      ).toMatchObject({ handoffMode: mode, resumeAt: at });
    }
  });

  it('refuses other values, naming the value and the choices, with their lines', () => {
    const problems = problemsOf(() =>
      parseCrewConfig(
        yaml('entry_point: a', 'agents:', '  - id: a', 'settings:', '  handoff_mode: tools', '  resume_at: last'),
      ),
    );
    expect(problems).toEqual([
      expect.objectContaining({
        path: 'settings.handoff_mode',
        line: 5,
        message: 'expected "marker" or "tool" or "both", got "tools"',
      }),
      expect.objectContaining({
        path: 'settings.resume_at',
        line: 6,
        message: 'expected "entry" or "last_agent", got "last"',
      }),
    ]);
    const inCode = problemsOf(() =>
      resolveCrewConfig({
        entryPoint: 'a',
        agents: [{ id: 'a' }],
        settings: { handoffMode: 1 as unknown as 'tool', resumeAt: null as unknown as 'entry' },
      }),
    );
    expect(inCode.map((p) => [p.path, p.message])).toEqual([
      ['settings.handoffMode', 'expected "marker" or "tool" or "both", got 1'],
      ['settings.resumeAt', 'expected "entry" or "last_agent", got null'],
    ]);
  });
});

describe('transfer tool names (handoff_mode: tool | both)', () => {
  const routing = [
    'routing:', // 9 (after the settings lines)
    '  signals:',
    '    triage:',
    '      - { signal: "[BILLING]", target: billing }',
    '      - { signal: "[DESK]", target: "billing desk" }',
    '      - { signal: "[TO_BILLING]", target: billing }',
    '      - { signal: "[DONE]", target: "" }',
    '    billing:',
    '      - { signal: "[RESOLVED]", target: "" }',
    '      - { signal: "[PROPOSED]", target: "" }',
    '      - { signal: "[REFUND]", target: triage, tool: refund }',
    '      - { signal: "[BAD]", target: triage, tool: "bad name!" }',
  ];

  it('reports every problem at once, at the signal, with its line', () => {
    const text = yaml(...DESK, 'settings:', '  handoff_mode: tool', ...routing);
    const problems = problemsOf(() => parseCrewConfig(text));
    expect(problems.map((p) => [p.path, p.line])).toEqual([
      ['routing.signals.triage[1].target', 15], // transfer_to_billing desk
      ['routing.signals.triage[2].target', 16], // a second transfer_to_billing
      ['routing.signals.billing[0].target', 19], // finish: billing has a tool named finish
      ['routing.signals.billing[1].target', 20], // a second finish
      ['routing.signals.billing[2].tool', 21], // refund: billing's own tool
      ['routing.signals.billing[3].tool', 22], // not a tool name
    ]);
    expect(problems[0]!.message).toBe(
      'signal "[DESK]" of agent "triage" would be offered as the transfer tool "transfer_to_billing desk", which is not a valid tool name (1 to 64 letters, digits, "_" or "-"): give the signal a tool name',
    );
    expect(problems[1]!.message).toBe(
      'signal "[TO_BILLING]" of agent "triage" would be offered as the transfer tool "transfer_to_billing", like signal "[BILLING]" at routing.signals.triage[0]: give one of them a different tool name',
    );
    expect(problems[2]!.message).toBe(
      'signal "[RESOLVED]" of agent "billing" would be offered as the transfer tool "finish", which is also the name of one of the agent\'s own tools: give the signal a different tool name',
    );
    expect(problems[3]!.message).toContain('like signal "[RESOLVED]" at routing.signals.billing[0]');
    expect(problems[4]!.message).toContain('"refund", which is also the name of one of the agent\'s own tools');
    expect(problems[5]!.message).toBe('invalid tool name "bad name!": expected 1 to 64 letters, digits, "_" or "-"');
  });

  it('in marker mode the generated names are not checked (they are never offered); a bad `tool` still is', () => {
    const text = yaml(...DESK, 'settings:', '  handoff_mode: marker', ...routing);
    expect(problemsOf(() => parseCrewConfig(text)).map((p) => [p.path, p.line])).toEqual([
      ['routing.signals.billing[3].tool', 22],
    ]);
  });

  it('both mode checks as tool mode does; a tool name fixes each clash', () => {
    const text = yaml(...DESK, 'settings:', '  handoff_mode: both', ...routing);
    expect(problemsOf(() => parseCrewConfig(text))).toHaveLength(6);
    const fixed = yaml(
      ...DESK,
      'settings:',
      '  handoff_mode: both',
      'routing:',
      '  signals:',
      '    triage:',
      '      - { signal: "[BILLING]", target: billing }',
      '      - { signal: "[DESK]", target: "billing desk", tool: transfer_to_desk }',
      '      - { signal: "[TO_BILLING]", target: billing, tool: send_to_billing }',
      '    billing:',
      '      - { signal: "[RESOLVED]", target: "", tool: resolved }',
      '      - { signal: "[PROPOSED]", target: "", tool: proposed }',
    );
    const crew = parseCrewConfig(fixed);
    expect(crew.routing.signals.triage![1]).toEqual({
      signal: '[DESK]',
      target: 'billing desk',
      tool: 'transfer_to_desk',
    });
    expect(crew.agents[0]).toEqual({
      id: 'triage',
      description: 'First line of the desk',
      handoffTargets: [],
      tools: [],
    });
  });

  it('a tool name of 64 characters is accepted, 65 is not (generated or given)', () => {
    const id = 'a'.repeat(64 - 'transfer_to_'.length);
    const ok = {
      entryPoint: 'x',
      agents: [{ id: 'x' }, { id }],
      settings: { handoffMode: 'tool' as const },
      routing: { signals: { x: [{ signal: '[GO]', target: id }] } },
    };
    expect(resolveCrewConfig(ok).routing.signals.x).toHaveLength(1);
    const long = {
      ...ok,
      agents: [{ id: 'x' }, { id: `${id}b` }],
      routing: { signals: { x: [{ signal: '[GO]', target: `${id}b` }] } },
    };
    expect(problemsOf(() => resolveCrewConfig(long)).map((p) => p.path)).toEqual(['routing.signals.x[0].target']);
    const given = { ...ok, routing: { signals: { x: [{ signal: '[GO]', target: id, tool: 't'.repeat(65) }] } } };
    expect(problemsOf(() => resolveCrewConfig(given)).map((p) => p.path)).toEqual(['routing.signals.x[0].tool']);
  });

  it('the schema reports the same problems on parsed data', () => {
    const result = crewConfigSchema.safeParse({
      entry_point: 'a',
      agents: [{ id: 'a', tools: ['finish'] }],
      settings: { handoff_mode: 'tool' },
      routing: { signals: { a: [{ signal: '[DONE]', target: '' }] } },
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(['routing.signals.a.0.target']);
  });

  it('the executor validates a crew written in code the same way', () => {
    const crew = {
      entryPoint: 'a',
      agents: [{ id: 'a' }, { id: 'b c' }],
      settings: { handoffMode: 'tool' as const },
      routing: { signals: { a: [{ signal: '[B]', target: 'b c' }] } },
    };
    expect(problemsOf(() => new CrewExecutor({ crew, model: scriptedModel([]) })).map((p) => p.path)).toEqual([
      'routing.signals.a[0].target',
    ]);
  });

  it('unknown keys next to the new ones are still errors', () => {
    const problems = problemsOf(() =>
      parseCrewConfig(
        yaml(
          'entry_point: a',
          'agents:',
          '  - id: a',
          '    descripton: typo',
          'settings:',
          '  handoffmode: tool',
          'routing:',
          '  signals:',
          '    a: [{ signal: "[X]", target: "", tools: x }]',
        ),
      ),
    );
    expect(problems.map((p) => [p.path, p.line])).toEqual([
      ['agents[0].descripton', 4],
      ['settings.handoffmode', 6],
      ['routing.signals.a[0].tools', 9],
    ]);
    expect(problems[1]!.message).toContain('handoff_mode, resume_at');
    expect(problems[2]!.message).toContain('signal, target, description, tool');
  });
});
