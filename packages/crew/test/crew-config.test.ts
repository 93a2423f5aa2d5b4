import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type * as z from 'zod';
import { ConfigError, isSignalyardError } from '@signalyard/core';
import type { ConfigProblem } from '@signalyard/core';
import {
  DEFAULT_CREW_SETTINGS,
  crewConfigSchema,
  loadCrewConfig,
  parseCrewConfig,
  resolveCrewConfig,
} from '@signalyard/crew';
import type { CrewConfig, CrewConfigInput } from '@signalyard/crew';

/** Joins lines, so a test can read off line numbers: lines[0] is line 1. */
const yaml = (...lines: string[]): string => lines.join('\n') + '\n';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw new Error(`expected a ConfigError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
}

const problemsOf = (text: string): readonly ConfigProblem[] => configError(() => parseCrewConfig(text)).problems;
/** [path, line] of every problem, in reported order. */
const where = (text: string): [string, number | undefined][] => problemsOf(text).map((p) => [p.path, p.line]);

function expectOneProblem(text: string, path: string, line: number, message: RegExp | string): void {
  const problems = problemsOf(text);
  expect(problems, JSON.stringify(problems, null, 2)).toHaveLength(1);
  expect(problems[0]).toMatchObject({ path, line });
  if (typeof message === 'string') expect(problems[0]!.message).toContain(message);
  else expect(problems[0]!.message).toMatch(message);
}

// The contract's example, verbatim.
const EXAMPLE = yaml(
  'entry_point: teacher',
  'agents:',
  '  - id: teacher',
  '    name: Teacher                 # optional',
  '    system_prompt: "..."          # optional',
  '    handoff_targets: [student]    # optional, fallback order',
  "    tools: [lookup]               # optional, names resolved against the executor's tools",
  '  - id: student',
  '  - id: reporter',
  'settings:',
  '  max_handoffs: 5                 # default 5',
  '  max_rounds: 10                  # model calls per run, default 10 (tool rounds count)',
  '  max_tool_rounds: 5              # consecutive tool rounds for one agent turn, default 5',
  '  max_history_messages: 200       # default 200',
  '  parallel_timeout_seconds: 60    # default 60',
  'routing:',
  '  signals:',
  '    teacher:',
  '      - { signal: "[QUESTION]", target: parallel_question, description: "ask both" }',
  '      - { signal: "[END_EXAM]", target: "" }          # "" = terminate',
  '    student:',
  '      - { signal: "[ANSWER]", target: teacher }',
  '  agent_behaviors:',
  '    reporter: { wait_for_signal: false, is_terminal: true }',
  '  parallel_groups:',
  '    parallel_question: { agents: [student, reporter], timeout_seconds: 30, wait_for_all: true, next_agent: teacher }',
);

/** A valid crew to break one line at a time. Lines: 1 entry_point, 2 agents, 3-4 teacher, 5 student, 6 reporter. */
const BASE = [
  'entry_point: teacher', // 1
  'agents:', // 2
  '  - id: teacher', // 3
  '    handoff_targets: [student]', // 4
  '  - id: student', // 5
  '  - id: reporter', // 6
];

describe('parseCrewConfig: valid files', () => {
  it('parses the contract example into the camelCase CrewConfig', () => {
    const crew = parseCrewConfig(EXAMPLE);
    expect(crew).toEqual({
      entryPoint: 'teacher',
      agents: [
        { id: 'teacher', name: 'Teacher', systemPrompt: '...', handoffTargets: ['student'], tools: ['lookup'] },
        { id: 'student', handoffTargets: [], tools: [] },
        { id: 'reporter', handoffTargets: [], tools: [] },
      ],
      settings: {
        maxHandoffs: 5,
        maxRounds: 10,
        maxToolRounds: 5,
        maxHistoryMessages: 200,
        parallelTimeoutSeconds: 60,
        hideSignals: true,
        handoffMode: 'marker',
        resumeAt: 'entry',
      },
      routing: {
        signals: {
          teacher: [
            { signal: '[QUESTION]', target: 'parallel_question', description: 'ask both' },
            { signal: '[END_EXAM]', target: '' },
          ],
          student: [{ signal: '[ANSWER]', target: 'teacher' }],
        },
        agentBehaviors: { reporter: { waitForSignal: false, isTerminal: true } },
        parallelGroups: {
          parallel_question: {
            agents: ['student', 'reporter'],
            timeoutSeconds: 30,
            waitForAll: true,
            nextAgent: 'teacher',
          },
        },
      },
    });
  });

  it('fills in the contract defaults when settings and routing are left out', () => {
    const crew = parseCrewConfig(yaml('entry_point: solo', 'agents:', '  - id: solo'));
    expect(crew.settings).toEqual({
      maxHandoffs: 5,
      maxRounds: 10,
      maxToolRounds: 5,
      maxHistoryMessages: 200,
      parallelTimeoutSeconds: 60,
      hideSignals: true,
      handoffMode: 'marker',
      resumeAt: 'entry',
    });
    expect(crew.settings).toEqual(DEFAULT_CREW_SETTINGS);
    expect(crew.routing).toEqual({ signals: {}, agentBehaviors: {}, parallelGroups: {} });
    expect(crew.agents).toEqual([{ id: 'solo', handoffTargets: [], tools: [] }]);
    expect('name' in crew.agents[0]! || 'systemPrompt' in crew.agents[0]!).toBe(false);
  });

  it('fills in each setting and each routing map separately', () => {
    const crew = parseCrewConfig(
      yaml(
        ...BASE,
        'settings:',
        '  max_rounds: 3',
        'routing:',
        '  agent_behaviors:',
        '    student: { wait_for_signal: true }',
        '    reporter: {}',
        '  parallel_groups:',
        '    both: { agents: [student, reporter] }',
      ),
    );
    expect(crew.settings).toEqual({ ...DEFAULT_CREW_SETTINGS, maxRounds: 3 });
    expect(crew.routing.signals).toEqual({});
    expect(crew.routing.agentBehaviors).toEqual({
      student: { waitForSignal: true, isTerminal: false },
      reporter: { waitForSignal: false, isTerminal: false },
    });
    // a group without timeout_seconds gets parallel_timeout_seconds; wait_for_all defaults to true
    expect(crew.routing.parallelGroups).toEqual({
      both: { agents: ['student', 'reporter'], timeoutSeconds: 60, waitForAll: true },
    });
  });

  it('allows fractional timeouts and takes a group default from settings', () => {
    const crew = parseCrewConfig(
      yaml(
        ...BASE,
        'settings: { parallel_timeout_seconds: 2.5 }',
        'routing:',
        '  parallel_groups:',
        '    a: { agents: [student], timeout_seconds: 0.25, wait_for_all: false }',
        '    b: { agents: [reporter] }',
      ),
    );
    expect(crew.settings.parallelTimeoutSeconds).toBe(2.5);
    expect(crew.routing.parallelGroups.a).toEqual({ agents: ['student'], timeoutSeconds: 0.25, waitForAll: false });
    expect(crew.routing.parallelGroups.b!.timeoutSeconds).toBe(2.5);
  });

  it('accepts empty routing maps and empty agent lists of targets and tools', () => {
    const crew = parseCrewConfig(
      yaml(
        'entry_point: a',
        'agents: [{ id: a, handoff_targets: [], tools: [] }]',
        'routing: { signals: {}, agent_behaviors: {}, parallel_groups: {} }',
      ),
    );
    expect(crew.routing).toEqual({ signals: {}, agentBehaviors: {}, parallelGroups: {} });
  });

  it('returns a deeply frozen config whose maps have no prototype', () => {
    const crew = parseCrewConfig(EXAMPLE);
    expect(Object.isFrozen(crew)).toBe(true);
    expect(Object.isFrozen(crew.agents)).toBe(true);
    expect(Object.isFrozen(crew.agents[0]!.handoffTargets)).toBe(true);
    expect(Object.isFrozen(crew.settings)).toBe(true);
    expect(Object.isFrozen(crew.routing.signals.teacher)).toBe(true);
    expect(Object.isFrozen(crew.routing.signals.teacher![0])).toBe(true);
    expect(Object.isFrozen(crew.routing.parallelGroups.parallel_question!.agents)).toBe(true);
    expect(Object.getPrototypeOf(crew.routing.signals)).toBeNull();
    // a lookup for an agent without signals finds nothing, even for Object.prototype names
    const inherited: string[] = ['constructor', 'toString', 'hasOwnProperty'];
    expect(crew.routing.signals.reporter).toBeUndefined();
    for (const key of inherited) {
      expect(crew.routing.signals[key]).toBeUndefined();
      expect(crew.routing.agentBehaviors[key]).toBeUndefined();
    }
  });

  it('handles agents named like Object.prototype members without prototype pollution', () => {
    const crew = parseCrewConfig(
      yaml(
        'entry_point: constructor',
        'agents: [{ id: constructor }, { id: __proto__ }, { id: toString }]',
        'routing:',
        '  signals:',
        '    constructor: [{ signal: "[NEXT]", target: __proto__ }]',
        '    __proto__: [{ signal: "[BACK]", target: constructor }]',
        '  agent_behaviors:',
        '    toString: { is_terminal: true }',
      ),
    );
    const [constructorKey, protoKey, toStringKey]: string[] = ['constructor', '__proto__', 'toString'];
    expect(crew.routing.signals[constructorKey!]).toEqual([{ signal: '[NEXT]', target: '__proto__' }]);
    expect(Object.keys(crew.routing.signals)).toEqual(['constructor', '__proto__']);
    expect(crew.routing.signals[protoKey!]).toEqual([{ signal: '[BACK]', target: 'constructor' }]);
    expect(crew.routing.agentBehaviors[toStringKey!]).toEqual({ waitForSignal: false, isTerminal: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses the reserved names __proto__ and constructor as parallel group names, like the routing TOML', () => {
    const text = yaml(
      'entry_point: a', // 1
      'agents: [{ id: a }, { id: b }]', // 2
      'routing:', // 3
      '  parallel_groups:', // 4
      '    __proto__: { agents: [b] }', // 5
      '    constructor: { agents: [b] }', // 6
      '    toString: { agents: [b] }', // 7 (not reserved: an ordinary name)
    );
    expect(problemsOf(text)).toEqual([
      {
        path: 'routing.parallel_groups.__proto__',
        message: '"__proto__" is a reserved name and cannot be a parallel group name',
        line: 5,
        column: 5,
      },
      {
        path: 'routing.parallel_groups.constructor',
        message: '"constructor" is a reserved name and cannot be a parallel group name',
        line: 6,
        column: 5,
      },
    ]);
    // The same rule for a crew written in code (even with no usable agent to check references against).
    const groups = JSON.parse('{"__proto__": {"agents": ["b"]}}') as Record<string, { agents: string[] }>;
    const error = configError(() =>
      resolveCrewConfig({ entryPoint: 'a', agents: [], routing: { parallelGroups: groups } }),
    );
    expect(error.problems).toContainEqual({
      path: 'routing.parallelGroups.__proto__',
      message: '"__proto__" is a reserved name and cannot be a parallel group name',
    });
    expect(({} as Record<string, unknown>).agents).toBeUndefined();
  });

  it('accepts a byte order mark, comments, anchors and CRLF line ends', () => {
    const text =
      '\ufeff# crew\r\nentry_point: a\r\nagents:\r\n  - &a { id: a }\r\n  - id: b\r\n    handoff_targets: [a]\r\n';
    expect(parseCrewConfig(text).agents.map((a) => a.id)).toEqual(['a', 'b']);
  });

  it('the same signal in two agents is fine', () => {
    const crew = parseCrewConfig(
      yaml(
        ...BASE,
        'routing:',
        '  signals:',
        '    teacher: [{ signal: "[DONE]", target: "" }]',
        '    student: [{ signal: "[DONE]", target: "" }]',
      ),
    );
    expect(Object.keys(crew.routing.signals)).toEqual(['teacher', 'student']);
  });
});

describe('parseCrewConfig: every validation rule, with the line of the offending key or value', () => {
  it('unknown keys at every level, pointing at the key itself', () => {
    expectOneProblem(
      yaml(...BASE, 'entrypoint: x'),
      'entrypoint',
      7,
      'unknown key "entrypoint" (expected entry_point, agents, settings, routing, approvals)',
    );
    expectOneProblem(yaml(...BASE, '    nmae: Reporter'), 'agents[2].nmae', 7, 'unknown key "nmae"');
    expectOneProblem(
      yaml(...BASE, 'settings:', '  max_handofs: 3'),
      'settings.max_handofs',
      8,
      'expected max_handoffs, max_rounds',
    );
    expectOneProblem(
      yaml(...BASE, 'routing:', '  signal: {}'),
      'routing.signal',
      8,
      'expected signals, agent_behaviors, parallel_groups',
    );
    expectOneProblem(
      yaml(
        ...BASE,
        'routing:',
        '  signals:',
        '    teacher:',
        '      - signal: "[DONE]"',
        '        target: ""',
        '        desc: x',
      ),
      'routing.signals.teacher[0].desc',
      12,
      'expected signal, target, description',
    );
    expectOneProblem(
      yaml(...BASE, 'routing:', '  agent_behaviors:', '    reporter: { is_terminal: true, terminal: true }'),
      'routing.agent_behaviors.reporter.terminal',
      9,
      'expected wait_for_signal, is_terminal',
    );
    expectOneProblem(
      yaml(...BASE, 'routing:', '  parallel_groups:', '    g:', '      agents: [student]', '      timeout: 3'),
      'routing.parallel_groups.g.timeout',
      11,
      'expected agents, timeout_seconds, wait_for_all, next_agent',
    );
  });

  it('no agents', () => {
    expectOneProblem(yaml('entry_point: a', 'agents: []'), 'agents', 2, 'at least one agent');
    const missing = problemsOf(yaml('entry_point: a'));
    expect(missing).toEqual([{ path: 'agents', message: 'required', line: 1, column: 1 }]);
  });

  it('duplicate agent ids, at the second id', () => {
    expectOneProblem(
      yaml(...BASE, '  - id: student'),
      'agents[3].id',
      7,
      'duplicate agent id "student" (already used by agents[1])',
    );
  });

  it('an entry_point that is not an agent', () => {
    expectOneProblem(
      yaml('entry_point: techer', ...BASE.slice(1)),
      'entry_point',
      1,
      'unknown agent "techer" (agents: "teacher", "student", "reporter")',
    );
  });

  it('invalid signal formats', () => {
    for (const bad of ['END', '"[END"', '"[]"', '"[ ]"', '"[A]B]"', '""']) {
      expectOneProblem(
        yaml(...BASE, 'routing:', '  signals:', '    teacher:', `      - { signal: ${bad}, target: "" }`),
        'routing.signals.teacher[0].signal',
        10,
        'invalid signal',
      );
    }
  });

  it('duplicate signals within one agent, including ones that normalise alike', () => {
    const text = yaml(
      ...BASE,
      'routing:',
      '  signals:',
      '    teacher:',
      '      - { signal: "[ASK]", target: student }', // 10
      '      - { signal: "[DONE]", target: "" }', // 11
      '      - { signal: "[ASK]", target: reporter }', // 12
      '      - { signal: "[ Done ]", target: "" }', // 13
    );
    const problems = problemsOf(text);
    expect(problems.map((p) => [p.path, p.line])).toEqual([
      ['routing.signals.teacher[2].signal', 12],
      ['routing.signals.teacher[3].signal', 13],
    ]);
    expect(problems[0]!.message).toBe('duplicate signal "[ASK]" (already at routing.signals.teacher[0])');
    expect(problems[1]!.message).toContain('matches the same replies as "[DONE]" at routing.signals.teacher[1]');
  });

  it('a non-empty target that is neither an agent nor a parallel group', () => {
    const text = yaml(
      ...BASE,
      'routing:',
      '  signals:',
      '    teacher:',
      '      - { signal: "[A]", target: student }', // 10 agent: fine
      '      - { signal: "[B]", target: both }', // 11 group: fine
      '      - { signal: "[C]", target: "" }', // 12 terminate: fine
      '      - { signal: "[D]", target: studnet }', // 13
      '  parallel_groups:',
      '    both: { agents: [student, reporter] }',
    );
    expectOneProblem(
      text,
      'routing.signals.teacher[3].target',
      13,
      'unknown target "studnet": expected an agent ("teacher", "student", "reporter"), a parallel group ("both"), or "" to end the run',
    );
  });

  it('routing.signals and agent_behaviors keyed by unknown agents, pointing at the key', () => {
    expectOneProblem(
      yaml(...BASE, 'routing:', '  signals:', '    ghost:', '      - { signal: "[X]", target: "" }'),
      'routing.signals.ghost',
      9,
      '"ghost" is not an agent',
    );
    expectOneProblem(
      yaml(...BASE, 'routing:', '  agent_behaviors:', '    ghost: { is_terminal: true }'),
      'routing.agent_behaviors.ghost',
      9,
      '"ghost" is not an agent',
    );
  });

  it('handoff targets, group members and next_agent naming unknown agents', () => {
    expectOneProblem(
      yaml(...BASE, '    handoff_targets: [teacher, ghost]'),
      'agents[2].handoff_targets[1]',
      7,
      'unknown agent "ghost"',
    );
    const text = yaml(
      ...BASE,
      'routing:',
      '  parallel_groups:',
      '    g:',
      '      agents:',
      '        - student', // 11
      '        - ghost', // 12
      '      next_agent: nobody', // 13
    );
    expect(where(text)).toEqual([
      ['routing.parallel_groups.g.agents[1]', 12],
      ['routing.parallel_groups.g.next_agent', 13],
    ]);
    expect(problemsOf(text)[1]!.message).toContain('unknown agent "nobody"');
  });

  it('empty groups, a member listed twice, a group named like an agent', () => {
    expectOneProblem(
      yaml(...BASE, 'routing:', '  parallel_groups:', '    g: { agents: [] }'),
      'routing.parallel_groups.g.agents',
      9,
      'at least one agent',
    );
    expectOneProblem(
      yaml(...BASE, 'routing:', '  parallel_groups:', '    g: { agents: [student, student] }'),
      'routing.parallel_groups.g.agents[1]',
      9,
      'listed twice',
    );
    expectOneProblem(
      yaml(...BASE, 'routing:', '  parallel_groups:', '    student: { agents: [reporter] }'),
      'routing.parallel_groups.student',
      9,
      'has the name of an agent',
    );
  });

  it('non-positive limits and timeouts', () => {
    for (const [key, value, message] of [
      ['max_handoffs', '0', 'expected a positive integer, got 0'],
      ['max_rounds', '-1', 'expected a positive integer, got -1'],
      ['max_tool_rounds', '1.5', 'expected a positive integer, got 1.5'],
      ['max_history_messages', '"200"', 'expected a positive integer, got "200"'],
      ['parallel_timeout_seconds', '0', 'expected a positive number of seconds, got 0'],
      ['parallel_timeout_seconds', '.inf', 'got Infinity'],
      ['parallel_timeout_seconds', '.nan', 'got NaN'],
    ] as const) {
      expectOneProblem(yaml(...BASE, 'settings:', `  ${key}: ${value}`), `settings.${key}`, 8, message);
    }
    expectOneProblem(
      yaml(...BASE, 'routing:', '  parallel_groups:', '    g: { agents: [student], timeout_seconds: -0.5 }'),
      'routing.parallel_groups.g.timeout_seconds',
      9,
      'expected a positive number of seconds, got -0.5',
    );
  });

  it('wrong types, with the value they got', () => {
    expectOneProblem(yaml(...BASE, '  - id: 42'), 'agents[3].id', 7, 'expected a non-empty agent id, got 42');
    expectOneProblem(yaml(...BASE, '  - name: nameless'), 'agents[3].id', 7, 'required');
    expectOneProblem(
      yaml(...BASE, 'routing:', '  agent_behaviors:', '    reporter: { is_terminal: yes }'),
      'routing.agent_behaviors.reporter.is_terminal',
      9,
      'expected true or false, got "yes"',
    );
    expectOneProblem(
      yaml(...BASE, 'routing:', '  signals:', '    teacher: "[DONE]"'),
      'routing.signals.teacher',
      9,
      'expected a list, got "[DONE]"',
    );
    expectOneProblem(
      yaml(...BASE, 'routing:', '  signals:', '    teacher:', '      - { signal: "[DONE]" }'),
      'routing.signals.teacher[0].target',
      10,
      'required',
    );
    expectOneProblem(yaml(...BASE, 'settings:'), 'settings', 7, 'expected a mapping, got null');
    expectOneProblem(yaml('- just a list'), '', 1, 'expected a mapping');
  });

  it('reports several problems in one file together, sorted by line', () => {
    const text = yaml(
      'entry_point: ghost', // 1  unknown entry point
      'agents:', // 2
      '  - id: teacher', // 3
      '    handoff_targets: [student, nobody]', // 4  unknown handoff target
      '    colour: blue', // 5  unknown key
      '  - id: student', // 6
      '  - id: teacher', // 7  duplicate id
      'settings:', // 8
      '  max_handoffs: 0', // 9  non-positive limit
      'routing:', // 10
      '  signals:', // 11
      '    teacher:', // 12
      '      - { signal: "[ASK]", target: both }', // 13
      '      - { signal: "ASK", target: student }', // 14 invalid format
      '      - { signal: "[ask]", target: nowhere }', // 15 duplicate + unknown target
      '    ghost: []', // 16 unknown agent key
      '  agent_behaviors:', // 17
      '    student: { wait_for_signal: maybe }', // 18 wrong type
      '  parallel_groups:', // 19
      '    both: { agents: [], next_agent: teacher }', // 20 empty group
    );
    const error = configError(() => parseCrewConfig(text));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.problems.map((p) => [p.path, p.line])).toEqual([
      ['entry_point', 1],
      ['agents[0].handoff_targets[1]', 4],
      ['agents[0].colour', 5],
      ['agents[2].id', 7],
      ['settings.max_handoffs', 9],
      ['routing.signals.teacher[1].signal', 14],
      ['routing.signals.teacher[2].signal', 15],
      ['routing.signals.teacher[2].target', 15],
      ['routing.signals.ghost', 16],
      ['routing.agent_behaviors.student.wait_for_signal', 18],
      ['routing.parallel_groups.both.agents', 20],
    ]);
    expect(error.problems.every((p) => typeof p.column === 'number' && p.column >= 1)).toBe(true);
    expect(error.message).toContain('Invalid configuration (11 problems):');
    expect(error.message).toContain('4: agents[0].handoff_targets[1]: unknown agent "nobody"');
  });

  it('quotes keys that are not plain names in paths, and follows aliases to their lines', () => {
    const text = yaml(
      'entry_point: "team.lead"',
      'agents: [{ id: "team.lead" }, { id: helper }]',
      'shared: &signals [{ signal: "[GO]", target: nobody }]',
      'routing:',
      '  signals:',
      '    "team.lead": *signals',
    );
    expect(where(text)).toEqual([
      ['shared', 3],
      ['routing.signals["team.lead"][0].target', 3], // the aliased value sits at its anchor
    ]);
  });

  it('points at the offending value in flow and block style alike (column too)', () => {
    const problems = problemsOf(yaml(...BASE, 'settings: { max_rounds: 0, max_tool_rounds: -1 }'));
    expect(problems.map((p) => [p.path, p.line, p.column])).toEqual([
      ['settings.max_rounds', 7, 25],
      ['settings.max_tool_rounds', 7, 45],
    ]);
  });
});

describe('parseCrewConfig: YAML errors', () => {
  it('a syntax error is a ConfigError with its line', () => {
    const error = configError(() => parseCrewConfig(yaml(...BASE, 'routing:', '  signals: [unclosed', 'settings: {}')));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.problems.length).toBeGreaterThanOrEqual(1);
    expect(error.problems[0]!.message).toMatch(/^YAML syntax error: /);
    expect(error.problems[0]!.line).toBeGreaterThanOrEqual(8);
  });

  it('an unterminated quote is reported at the line and column where it opens, never past the end of the file', () => {
    const lines = ['entry_point: a', 'agents:', '  - id: a', '    name: "open', 'routing: {}'];
    for (const [name, text] of [
      ['with a final line break', lines.join('\n') + '\n'],
      ['without one', lines.join('\n')],
      ['with CRLF line breaks', lines.join('\r\n') + '\r\n'],
      ['single quotes', lines.join('\n').replace('"open', "'open") + '\n'],
      ['trailing blank lines', lines.join('\n') + '\n\n\n'],
    ] as const) {
      const problems = problemsOf(text);
      expect(problems, name).toHaveLength(1);
      expect(problems[0], name).toMatchObject({ path: '', line: 4, column: 11 });
      expect(problems[0]!.message, name).toMatch(/^YAML syntax error: Missing closing ["']quote/);
    }
  });

  it('an unterminated quoted key is reported where it opens', () => {
    expect(problemsOf('entry_point: a\n"agents\n: []\n')[0]).toMatchObject({ path: '', line: 2, column: 1 });
  });

  it('a syntax error found where the text ends is reported on the last line that has text', () => {
    const problems = problemsOf('entry_point: a\nagents: [a,\n\n');
    expect(problems.length).toBeGreaterThanOrEqual(1);
    for (const problem of problems) expect(problem.line).toBeLessThanOrEqual(2);
  });

  it('reports a bad indentation at its line', () => {
    const problems = problemsOf(yaml('entry_point: a', 'agents:', '  - id: a', ' bad: indent'));
    expect(problems[0]).toMatchObject({ path: '', line: 4 });
  });

  it('duplicate keys are errors, at the second key', () => {
    expectOneProblem(yaml(...BASE, 'entry_point: student'), '', 7, 'YAML syntax error: Map keys must be unique');
  });

  it('more than one document is an error', () => {
    expect(problemsOf(yaml(...BASE, '---', 'entry_point: x'))[0]).toMatchObject({ line: 7 });
  });

  it('an empty document is an error', () => {
    expectOneProblem('', '', 1, 'the document is empty');
    expectOneProblem('# only a comment\n', '', 1, 'the document is empty');
  });

  it('an unresolved alias is a problem at its own line and path', () => {
    const problems = problemsOf(yaml('entry_point: *nope', ...BASE.slice(1)));
    expect(problems).toEqual([
      { path: 'entry_point', message: 'unresolved alias *nope: no anchor &nope is set before it', line: 1, column: 14 },
    ]);
  });

  it('reports every unresolved alias at once, including one whose anchor comes after it', () => {
    const text = yaml(
      'entry_point: teacher', // 1
      'agents:', // 2
      '  - id: teacher', // 3
      '    handoff_targets: [*later, *missing]', // 4
      '  - id: &later student', // 5
      '  - id: *later', // 6 (resolved: the anchor is above)
      'settings: { max_rounds: *gone }', // 7
    );
    expect(problemsOf(text).map((p) => [p.path, p.line, p.message])).toEqual([
      ['agents[0].handoff_targets[0]', 4, 'unresolved alias *later: no anchor &later is set before it'],
      ['agents[0].handoff_targets[1]', 4, 'unresolved alias *missing: no anchor &missing is set before it'],
      ['settings.max_rounds', 7, 'unresolved alias *gone: no anchor &gone is set before it'],
    ]);
  });

  it('an alias bomb is refused', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
    const error = configError(() => parseCrewConfig(yaml(...lines)));
    expect(error.problems[0]!.message).toContain('cannot read the YAML');
  });

  it('text that is not a string is a ConfigError', () => {
    expect(configError(() => parseCrewConfig(undefined as unknown as string)).problems[0]!.message).toBe(
      'expected YAML text, got undefined',
    );
  });

  it('names the file when given one', () => {
    const error = configError(() => parseCrewConfig(yaml('entry_point: a', 'agents: []'), { file: 'crew.yaml' }));
    expect(error.file).toBe('crew.yaml');
    expect(error.message).toContain('crew.yaml:2: agents: a crew needs at least one agent');
  });
});

describe('loadCrewConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'signalyard-crew-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file by path or URL', async () => {
    const file = join(dir, 'crew.yaml');
    await writeFile(file, EXAMPLE);
    expect(await loadCrewConfig(file)).toEqual(parseCrewConfig(EXAMPLE));
    expect((await loadCrewConfig(pathToFileURL(file))).entryPoint).toBe('teacher');
  });

  it('reports problems with the file name', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, yaml('entry_point: a', 'agents: []'));
    const error = await loadCrewConfig(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).file).toBe(file);
    expect((error as ConfigError).problems).toEqual([
      { path: 'agents', message: 'a crew needs at least one agent', line: 2, column: 9 },
    ]);
  });

  it('a missing file is a ConfigError with the read error as cause', async () => {
    const file = join(dir, 'missing.yaml');
    const error = await loadCrewConfig(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isSignalyardError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as ConfigError).file).toBe(file);
    expect((error as ConfigError).problems[0]!.message).toContain('ENOENT');
    expect((error as Error).cause).toMatchObject({ code: 'ENOENT' });
  });

  it('a file: URL is read as its path, and that path is the ConfigError file', async () => {
    const file = join(dir, 'bad via url.yaml');
    await writeFile(file, yaml('entry_point: a', 'agents: []'));
    const error = await loadCrewConfig(pathToFileURL(file)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).file).toBe(file);
  });

  it.each([
    ['a number (never read as a file descriptor)', 0, '0'],
    ['undefined', undefined, 'undefined'],
    ['an empty path', '', '""'],
    ['an https: URL', new URL('https://example.com/crew.yaml'), '"https://example.com/crew.yaml"'],
  ])('refuses %s with a ConfigError naming the value', async (_label, value, shown) => {
    const error = await loadCrewConfig(value as string).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isSignalyardError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as ConfigError).message).toContain(`Invalid path ${shown} for a crew.yaml`);
    expect((error as ConfigError).problems).toEqual([{ path: '', message: expect.stringContaining(shown) as string }]);
  });
});

describe('resolveCrewConfig: a crew written in code', () => {
  it('fills in defaults and freezes the result', () => {
    const crew = resolveCrewConfig({
      entryPoint: 'teacher',
      agents: [{ id: 'teacher', handoffTargets: ['student'] }, { id: 'student' }],
      settings: { maxHandoffs: 3 },
      routing: {
        signals: { student: [{ signal: '[DONE]', target: '' }] },
        parallelGroups: { g: { agents: ['student'], nextAgent: 'teacher' } },
      },
    });
    expect(crew).toEqual({
      entryPoint: 'teacher',
      agents: [
        { id: 'teacher', handoffTargets: ['student'], tools: [] },
        { id: 'student', handoffTargets: [], tools: [] },
      ],
      settings: { ...DEFAULT_CREW_SETTINGS, maxHandoffs: 3 },
      routing: {
        signals: { student: [{ signal: '[DONE]', target: '' }] },
        agentBehaviors: {},
        parallelGroups: { g: { agents: ['student'], timeoutSeconds: 60, waitForAll: true, nextAgent: 'teacher' } },
      },
    });
    expect(Object.isFrozen(crew.routing)).toBe(true);
  });

  it('applies the same rules, with camelCase paths', () => {
    const error = configError(() =>
      resolveCrewConfig({
        entryPoint: 'ghost',
        agents: [{ id: 'a' }, { id: 'a' }],
        settings: { maxToolRounds: 0 },
        routing: { agentBehaviors: { b: { isTerminal: true } }, signals: { a: [{ signal: 'DONE', target: 'x' }] } },
      }),
    );
    expect(error.problems.map((p) => p.path)).toEqual([
      'settings.maxToolRounds',
      'routing.signals.a[0].signal',
      'agents[1].id',
      'entryPoint',
      'routing.signals.a[0].target',
      'routing.agentBehaviors.b',
    ]);
    expect(error.problems.every((p) => p.line === undefined)).toBe(true);
  });

  it('rejects snake_case keys in code, naming the camelCase ones', () => {
    const input = { entry_point: 'a', agents: [{ id: 'a' }] } as unknown as CrewConfigInput;
    const problems = configError(() => resolveCrewConfig(input)).problems;
    expect(problems).toEqual([
      { path: 'entryPoint', message: 'required' },
      {
        path: 'entry_point',
        message: 'unknown key "entry_point" (expected entryPoint, agents, settings, routing, approvals)',
      },
    ]);
  });

  it('returns an already resolved config as it is, and accepts a JSON copy of one', () => {
    const crew = parseCrewConfig(EXAMPLE);
    expect(resolveCrewConfig(crew)).toBe(crew);
    const copy = JSON.parse(JSON.stringify(crew)) as CrewConfig;
    expect(resolveCrewConfig(copy)).toEqual(crew);
  });

  it('rejects a value that is not an object', () => {
    expect(configError(() => resolveCrewConfig(null as unknown as CrewConfigInput)).problems).toEqual([
      { path: '', message: 'expected a mapping, got null' },
    ]);
  });
});

describe('crewConfigSchema', () => {
  it('validates parsed data and outputs the camelCase config', () => {
    const result = crewConfigSchema.safeParse({ entry_point: 'a', agents: [{ id: 'a', system_prompt: 'hi' }] });
    expect(result.success).toBe(true);
    expect(result.data?.agents[0]).toEqual({ id: 'a', systemPrompt: 'hi', handoffTargets: [], tools: [] });
  });

  it('reports all problems as zod issues, marking key problems', () => {
    const result = crewConfigSchema.safeParse({
      entry_point: 'b',
      agents: [{ id: 'a', extra: 1 }],
      routing: { signals: { z: [] } },
    });
    expect(result.success).toBe(false);
    const issues = result.error!.issues.map((i) => ({ path: i.path, params: (i as { params?: unknown }).params }));
    expect(issues).toEqual([
      { path: ['agents', 0, 'extra'], params: { at: 'key' } },
      { path: ['entry_point'], params: undefined },
      { path: ['routing', 'signals', 'z'], params: { at: 'key' } },
    ]);
  });

  it('has explicitly annotated types', () => {
    expectTypeOf(crewConfigSchema).toEqualTypeOf<z.ZodType<CrewConfig>>();
    expectTypeOf(parseCrewConfig).returns.toEqualTypeOf<CrewConfig>();
    expectTypeOf(loadCrewConfig).returns.toEqualTypeOf<Promise<CrewConfig>>();
    expectTypeOf<CrewConfig>().toExtend<CrewConfigInput>();
    expectTypeOf<CrewConfig['settings']['maxHandoffs']>().toEqualTypeOf<number>();
    expectTypeOf<CrewConfig['routing']['parallelGroups'][string]['waitForAll']>().toEqualTypeOf<boolean>();
  });
});
