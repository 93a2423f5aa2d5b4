import { describe, expect, it } from 'vitest';
import { Action, ConfigError, MemoryCheckpointStore, SignalKind, type Plugin } from '@signalyard/core';
import { createRunner, type AgentDefinition, type RunnerOptions } from 'signalyard';
import { thrownBy } from './support.js';

const engine: AgentDefinition['engine'] = async () => ({});
const main: AgentDefinition = { id: 'main', engine };

/** The problems of the ConfigError that createRunner throws for `options`, as path → message. */
function problemsOf(options: unknown): Map<string, string> {
  const error = thrownBy(() => createRunner(options as RunnerOptions));
  if (!ConfigError.isInstance(error)) throw error;
  expect(error.code).toBe('CONFIG_INVALID');
  const byPath = new Map(error.problems.map((p) => [p.path, p.message]));
  expect(byPath.size).toBe(error.problems.length); // one problem per path
  return byPath;
}

describe('createRunner: each bad option is named with its value and what was expected', () => {
  const cases: { options: unknown; path: string; message: string }[] = [
    { options: 'main', path: '', message: 'expected runner options { agents, ... }, got "main"' },
    { options: {}, path: 'agents', message: 'expected a non-empty list of agent definitions, got undefined' },
    { options: { agents: [] }, path: 'agents', message: 'expected a non-empty list of agent definitions, got []' },
    {
      options: { agents: [7] },
      path: 'agents[0]',
      message: 'expected an agent definition { id, engine, strategy?, routes?, whenBusy? }, got 7',
    },
    {
      options: { agents: [{ engine }] },
      path: 'agents[0].id',
      message: 'agent id undefined is not canonical: expected a non-empty lowercase id like "main"',
    },
    {
      options: { agents: [{ id: 'Main', engine }] },
      path: 'agents[0].id',
      message: 'agent id "Main" is not canonical: use "main"',
    },
    {
      options: { agents: [{ id: 'main', engine: 'gpt' }] },
      path: 'agents[0].engine',
      message: 'expected an Engine { turn } or an engine function, got "gpt"',
    },
    {
      options: { agents: [{ ...main, strategy: {} }] },
      path: 'agents[0].strategy',
      message: 'expected a strategy factory () => ExecutionStrategy, got {}',
    },
    {
      options: { agents: [{ ...main, routes: {} }] },
      path: 'agents[0].routes',
      message: 'expected a list of signal routes, got {}',
    },
    {
      options: {
        agents: [{ ...main, routes: [Action.Continue, { kind: SignalKind.Timer, action: Action.Continue }] }],
      },
      path: 'agents[0].routes[0]',
      message: 'kind undefined',
    },
    {
      options: { agents: [main], plugins: 'audit' },
      path: 'plugins',
      message: 'expected a list of plugins, got "audit"',
    },
    {
      options: { agents: [main], plugins: [{ name: '' }] },
      path: 'plugins[0]',
      message: 'expected a plugin with a non-empty name, got {"name":""}',
    },
    {
      options: { agents: [main], plugins: [{ name: 'p', dispose: 'later' }] },
      path: 'plugins[0].dispose',
      message: 'expected a function, got "later"',
    },
    {
      options: { agents: [main], plugins: [{ name: 'p', signalRoutes: [] }] },
      path: 'plugins[0].signalRoutes',
      message: 'expected a function, got []',
    },
    {
      options: { agents: [main], plugins: [{ name: 'p', signalRoutes: () => null }] },
      path: 'plugins[0].signalRoutes',
      message: 'returned null, expected a list of signal routes',
    },
    {
      options: {
        agents: [main],
        plugins: [
          {
            name: 'p',
            signalRoutes: () => {
              throw new Error('no routes today');
            },
          },
        ],
      },
      path: 'plugins[0].signalRoutes',
      message: 'threw: no routes today',
    },
    {
      options: { agents: [main], plugins: [{ name: 'p', signalRoutes: () => [{ kind: SignalKind.Timer }] }] },
      path: 'plugins[0].signalRoutes()[0]',
      message: 'action',
    },
    { options: { agents: [main], routing: 3 }, path: 'routing', message: 'expected a routing config object, got 3' },
    {
      options: { agents: [main], routing: { defaultAgentId: 'other' } },
      path: 'routing.defaultAgentId',
      message: 'default agent "other" is not one of the agents (["main"])',
    },
    {
      options: { agents: [main], store: new Map() },
      path: 'store',
      message: 'expected a CheckpointStore { load, save, delete, list }, got {}',
    },
    {
      options: { agents: [main], lock: 'redis' },
      path: 'lock',
      message: 'expected a SessionLock { withLock }, got "redis"',
    },
    {
      options: { agents: [main], maxConcurrentSessions: Number.MAX_SAFE_INTEGER + 2 },
      path: 'maxConcurrentSessions',
      message: 'expected a positive integer, got 9007199254740992',
    },
    {
      options: { agents: [main], maxHistoryMessages: 2.5 },
      path: 'maxHistoryMessages',
      message: 'expected a positive integer, got 2.5',
    },
    {
      options: { agents: [main], closeTimeoutMs: '100' },
      path: 'closeTimeoutMs',
      message: 'expected a finite number of milliseconds >= 0, got "100"',
    },
    {
      options: { agents: [main], logger: console.log },
      path: 'logger',
      message: 'expected a logger { debug, warn }, got a function',
    },
  ];

  it.each(cases)('$path: $message', ({ options, path, message }) => {
    const problems = problemsOf(options);
    expect([...problems.keys()]).toEqual([path]);
    expect(problems.get(path)).toContain(message);
  });
});

describe('createRunner: several problems at once', () => {
  it('lists the problems of every part together, in the order agents, plugins, routing, services', () => {
    const problems = problemsOf({
      agents: [
        { ...main, routes: [{ kind: 'nope', action: Action.Continue }] },
        { id: 'main', engine: 1 },
      ],
      plugins: [{ name: 'p', setup: 1 }, { name: 'p' }, null],
      routing: { bindings: [{ agentId: 'ghost', match: { channel: 'slack' } }] },
      store: {},
      maxConcurrentSessions: -1,
      closeTimeoutMs: Number.NaN,
    });
    expect([...problems.keys()]).toEqual([
      'agents[0].routes[0]',
      'agents[1].engine',
      'agents[1].id',
      'plugins[0].setup',
      'plugins[1].name',
      'plugins[2]',
      'routing.bindings[0].agentId',
      'store',
      'maxConcurrentSessions',
      'closeTimeoutMs',
    ]);
    expect(problems.get('agents[1].id')).toBe('duplicate agent id "main"');
    expect(problems.get('plugins[1].name')).toBe('duplicate plugin name "p"');
    expect(problems.get('maxConcurrentSessions')).toBe('expected a positive integer, got -1');
    expect(problems.get('closeTimeoutMs')).toBe('expected a finite number of milliseconds >= 0, got NaN');
  });

  it('reports a second agent with an id already used, even when the first one has another problem', () => {
    const problems = problemsOf({ agents: [{ id: 'main' }, main] });
    expect(problems).toEqual(
      new Map([
        ['agents[0].engine', 'expected an Engine { turn } or an engine function, got undefined'],
        ['agents[1].id', 'duplicate agent id "main"'],
      ]),
    );
  });

  it('an agent with problems only inside its routes still counts as an agent for the routing checks', () => {
    const problems = problemsOf({
      agents: [{ ...main, routes: [{ kind: 'nope', action: Action.Continue }] }],
      routing: { defaultAgentId: 'main' },
    });
    expect([...problems.keys()]).toEqual(['agents[0].routes[0]']);
  });
});

describe('createRunner: option values that mean "the default"', () => {
  it('accepts null for routing, plugins, routes and the limits', async () => {
    const runner = createRunner({
      agents: [{ ...main, routes: null as never }],
      routing: null as never,
      plugins: null as never,
      maxConcurrentSessions: null as never,
      maxHistoryMessages: null as never,
      closeTimeoutMs: null as never,
    });
    expect(await runner.handle({ channel: 'cli', text: 'hi' })).toMatchObject({ status: 'completed' });
    await runner.close();
  });

  it('keeps a plugin given as a class instance (its prototype methods) and calls its signalRoutes once, on it', async () => {
    class Counter implements Plugin {
      readonly name = 'counter';
      reads = 0;
      signalRoutes() {
        this.reads++;
        return [{ kind: SignalKind.Timer, action: Action.reject('no timers') }];
      }
    }
    const plugin = new Counter();
    const runner = createRunner({ agents: [main], plugins: [plugin], store: new MemoryCheckpointStore() });
    expect(plugin.reads).toBe(1);
    await runner.close();
  });
});
