import { describe, expect, it } from 'vitest';
import { Action, ConfigError, SignalKind, signal, type Plugin } from '@signalyard/core';
import { createRunner, type AgentDefinition, type RunnerOptions } from 'signalyard';
import { MAIN, thrownBy } from './support.js';

const engine: AgentDefinition['engine'] = async () => ({});
const agent = (id: string, extra: Partial<AgentDefinition> = {}): AgentDefinition => ({ id, engine, ...extra });

/** The ConfigError that createRunner throws for `options` (cast: these are deliberately malformed). */
function configError(options: unknown): ConfigError {
  const error = thrownBy(() => createRunner(options as RunnerOptions));
  if (!ConfigError.isInstance(error)) throw error;
  expect(error.code).toBe('CONFIG_INVALID');
  return error;
}

const paths = (error: ConfigError): string[] => error.problems.map((p) => p.path);

describe('createRunner: every problem in one ConfigError', () => {
  it('lists duplicate and non-canonical agent ids, unknown agents in bindings and the default, duplicate plugin names and bad limits together', () => {
    const error = configError({
      agents: [agent('main'), agent('main'), agent('Work Bot')],
      routing: { defaultAgentId: 'ghost', bindings: [{ agentId: 'nobody', match: { channel: 'telegram' } }] },
      plugins: [{ name: 'audit' }, { name: 'audit' }],
      maxConcurrentSessions: 0,
    });
    expect(paths(error)).toEqual(
      expect.arrayContaining([
        'agents[1].id',
        'agents[2].id',
        'routing.defaultAgentId',
        'routing.bindings[0].agentId',
        'plugins[1].name',
        'maxConcurrentSessions',
      ]),
    );
    expect(error.problems).toHaveLength(6);
    // Every problem names the bad value.
    const byPath = new Map(error.problems.map((p) => [p.path, p.message]));
    expect(byPath.get('agents[1].id')).toContain('"main"');
    expect(byPath.get('agents[2].id')).toContain('"work-bot"');
    expect(byPath.get('routing.defaultAgentId')).toContain('"ghost"');
    expect(byPath.get('routing.bindings[0].agentId')).toContain('"nobody"');
    expect(byPath.get('plugins[1].name')).toContain('"audit"');
    expect(error.message).toContain('6 problems');
  });

  it('reports a binding that names an unknown agent even when the agent ids are all valid', () => {
    const error = configError({
      agents: [agent('main'), agent('general')],
      routing: {
        bindings: [
          { agentId: 'general', match: { channel: 'telegram' } },
          { agentId: 'work', match: { channel: 'slack' } },
        ],
      },
    });
    expect(error.problems).toEqual([expect.objectContaining({ path: 'routing.bindings[1].agentId' })]);
  });

  it('reports routing config problems from the sessions package under routing.*', () => {
    const error = configError({
      agents: [agent('main')],
      routing: { bogus: 1, session: { identityLinks: { john: ['123'] } } },
    });
    expect(paths(error)).toEqual(expect.arrayContaining(['routing.bogus', 'routing.session.identityLinks.john[0]']));
  });

  const cases: { what: string; options: unknown; path: string }[] = [
    { what: 'no options object', options: null, path: '' },
    { what: 'an empty agent list', options: { agents: [] }, path: 'agents' },
    { what: 'agents that are not a list', options: { agents: 'main' }, path: 'agents' },
    { what: 'an agent that is not an object', options: { agents: [null] }, path: 'agents[0]' },
    { what: 'an empty agent id', options: { agents: [agent('')] }, path: 'agents[0].id' },
    { what: 'an agent id that is not a string', options: { agents: [{ id: 7, engine }] }, path: 'agents[0].id' },
    { what: 'an agent without an engine', options: { agents: [{ id: 'main' }] }, path: 'agents[0].engine' },
    {
      what: 'an engine object without turn()',
      options: { agents: [{ id: 'main', engine: { run: engine } }] },
      path: 'agents[0].engine',
    },
    {
      what: 'a strategy that is not a factory',
      options: { agents: [agent('main', { strategy: 'fsm' as never })] },
      path: 'agents[0].strategy',
    },
    {
      what: 'agent routes that are not a list',
      options: { agents: [agent('main', { routes: 'x' as never })] },
      path: 'agents[0].routes',
    },
    {
      what: 'a malformed agent route',
      options: { agents: [agent('main', { routes: [{ kind: 'nope' as never, action: Action.Continue }] })] },
      path: 'agents[0].routes[0]',
    },
    { what: 'plugins that are not a list', options: { agents: [agent('main')], plugins: {} }, path: 'plugins' },
    { what: 'a plugin without a name', options: { agents: [agent('main')], plugins: [{}] }, path: 'plugins[0]' },
    {
      what: 'a plugin hook that is not a function',
      options: { agents: [agent('main')], plugins: [{ name: 'p', setup: 1 }] },
      path: 'plugins[0].setup',
    },
    {
      what: 'a plugin whose signalRoutes() throws',
      options: {
        agents: [agent('main')],
        plugins: [
          {
            name: 'p',
            signalRoutes: () => {
              throw new Error('nope');
            },
          },
        ],
      },
      path: 'plugins[0].signalRoutes',
    },
    {
      what: 'a plugin whose signalRoutes() returns no list',
      options: { agents: [agent('main')], plugins: [{ name: 'p', signalRoutes: () => 'x' }] },
      path: 'plugins[0].signalRoutes',
    },
    {
      what: 'a malformed plugin route',
      options: {
        agents: [agent('main')],
        plugins: [{ name: 'p', signalRoutes: () => [{ kind: SignalKind.UserMessage, action: { type: 'bogus' } }] }],
      },
      path: 'plugins[0].signalRoutes()[0]',
    },
    {
      what: 'a routing config that is not an object',
      options: { agents: [agent('main')], routing: 'x' },
      path: 'routing',
    },
    {
      what: 'a store without the CheckpointStore methods',
      options: { agents: [agent('main')], store: { load: () => undefined } },
      path: 'store',
    },
    { what: 'a lock without withLock', options: { agents: [agent('main')], lock: {} }, path: 'lock' },
    {
      what: 'maxConcurrentSessions 0',
      options: { agents: [agent('main')], maxConcurrentSessions: 0 },
      path: 'maxConcurrentSessions',
    },
    {
      what: 'a fractional maxConcurrentSessions',
      options: { agents: [agent('main')], maxConcurrentSessions: 1.5 },
      path: 'maxConcurrentSessions',
    },
    {
      what: 'a maxConcurrentSessions string',
      options: { agents: [agent('main')], maxConcurrentSessions: '2' },
      path: 'maxConcurrentSessions',
    },
    {
      what: 'maxHistoryMessages 0',
      options: { agents: [agent('main')], maxHistoryMessages: 0 },
      path: 'maxHistoryMessages',
    },
    {
      what: 'a negative maxHistoryMessages',
      options: { agents: [agent('main')], maxHistoryMessages: -5 },
      path: 'maxHistoryMessages',
    },
    {
      what: 'a negative closeTimeoutMs',
      options: { agents: [agent('main')], closeTimeoutMs: -1 },
      path: 'closeTimeoutMs',
    },
    {
      what: 'a NaN closeTimeoutMs',
      options: { agents: [agent('main')], closeTimeoutMs: Number.NaN },
      path: 'closeTimeoutMs',
    },
    {
      what: 'an infinite closeTimeoutMs',
      options: { agents: [agent('main')], closeTimeoutMs: Number.POSITIVE_INFINITY },
      path: 'closeTimeoutMs',
    },
    {
      what: 'a logger without debug and warn',
      options: { agents: [agent('main')], logger: { info: () => undefined } },
      path: 'logger',
    },
  ];

  it.each(cases)('rejects $what with a problem at "$path"', ({ options, path }) => {
    const error = configError(options);
    expect(paths(error)).toContain(path);
    for (const p of error.problems) expect(p.message).not.toBe('');
  });
});

describe('createRunner: valid options', () => {
  it('accepts the minimal limits (1 session, 1 history message, closeTimeoutMs 0)', async () => {
    const runner = createRunner({
      agents: [agent('main')],
      maxConcurrentSessions: 1,
      maxHistoryMessages: 1,
      closeTimeoutMs: 0,
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.status).toBe('completed');
    expect((await runner.session(MAIN))?.history).toEqual([{ role: 'user', content: 'hi' }]);
    await runner.close();
  });

  it('accepts an engine given as an object with a turn() method', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine: { turn: async (ctx) => ({ output: ctx.agentId }) } }],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome).toMatchObject({ status: 'completed', output: 'main' });
    await runner.close();
  });

  it('makes the first agent the default agent when no routing is given', async () => {
    const runner = createRunner({ agents: [agent('support'), agent('main')] });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome).toMatchObject({ agentId: 'support', sessionKey: 'agent:support:main', status: 'completed' });
    await runner.close();
  });

  it("reads each plugin's signalRoutes() once, when the runner is created", async () => {
    let reads = 0;
    const plugin: Plugin = {
      name: 'counter',
      signalRoutes: () => {
        reads++;
        return [{ kind: SignalKind.Timer, action: Action.reject('no timers') }];
      },
    };
    const runner = createRunner({ agents: [agent('main')], plugins: [plugin] });
    expect(reads).toBe(1);
    await runner.dispatch(MAIN, signal(SignalKind.Timer));
    await runner.dispatch('agent:main:other', signal(SignalKind.Timer));
    expect(reads).toBe(1);
    await runner.close();
  });
});
