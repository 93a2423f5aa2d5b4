import { Action, ConfigError, SignalKind, signal } from '@signalyard/core';
import { auditLogPlugin, createRunner, rateLimitPlugin, RunnerError, type AuditEntry } from 'signalyard';
import { describe, expect, it } from 'vitest';

const echo = async () => ({ messages: [{ role: 'assistant' as const, content: 'ok' }] });
const dm = (id: string, text = 'hi') => ({ channel: 'telegram', peer: { kind: 'dm' as const, id }, text });

describe('rateLimitPlugin', () => {
  it('rejects user messages over the limit with rate_limited from the plugin tier', async () => {
    const t = 0;
    const runner = createRunner({
      agents: [{ id: 'main', engine: echo }],
      plugins: [rateLimitPlugin({ perSession: 2, windowMs: 1000, now: () => t })],
    });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await runner.handle(dm('1')));
    expect(statuses.map((o) => o.status)).toEqual(['completed', 'completed', 'rejected', 'rejected']);
    expect(statuses[2]?.action).toEqual(Action.reject('rate_limited'));
    expect(statuses[2]?.decidedBy?.tier).toBe('plugin');
    expect(statuses[2]?.decidedBy?.route.name).toBe('rate-limit');
    await runner.close();
  });

  it('slides the window: old messages stop counting', async () => {
    let t = 0;
    const runner = createRunner({
      agents: [{ id: 'main', engine: echo }],
      plugins: [rateLimitPlugin({ perSession: 2, windowMs: 1000, now: () => t })],
    });
    expect((await runner.handle(dm('1'))).status).toBe('completed'); // t=0
    t = 500;
    expect((await runner.handle(dm('1'))).status).toBe('completed'); // t=500
    t = 900;
    expect((await runner.handle(dm('1'))).status).toBe('rejected'); // 3 in (−100, 900]
    t = 1001;
    expect((await runner.handle(dm('1'))).status).toBe('rejected'); // t=500, 900, 1001
    t = 1901;
    expect((await runner.handle(dm('1'))).status).toBe('completed'); // only 1901 remains… and 1001
    await runner.close();
  });

  it("times arrivals with the runner's clock by default, and with its own clock when given one", async () => {
    let t = 0;
    const clock = { now: () => t };
    const runner = createRunner({
      agents: [{ id: 'main', engine: echo }],
      plugins: [rateLimitPlugin({ perSession: 1, windowMs: 1000 })],
      clock,
    });
    expect((await runner.handle(dm('1'))).status).toBe('completed');
    t = 999;
    expect((await runner.handle(dm('1'))).status).toBe('rejected');
    t = 2500; // the window slid on the runner's clock, whatever the system time
    expect((await runner.handle(dm('1'))).status).toBe('completed');
    await runner.close();

    let own = 0;
    const pinned = createRunner({
      agents: [{ id: 'main', engine: echo }],
      plugins: [rateLimitPlugin({ perSession: 1, windowMs: 1000, clock: { now: () => own }, now: () => 10_000 })],
      clock,
    });
    expect((await pinned.handle(dm('1'))).status).toBe('completed');
    t += 5000; // the runner's clock moves; the plugin's own does not
    expect((await pinned.handle(dm('1'))).status).toBe('rejected');
    own = 1500;
    expect((await pinned.handle(dm('1'))).status).toBe('completed');
    await pinned.close();
  });

  it('counts two sessions separately', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine: echo }],
      plugins: [rateLimitPlugin({ perSession: 1, windowMs: 60_000, now: () => 0 })],
    });
    expect((await runner.handle(dm('a'))).status).toBe('completed');
    expect((await runner.handle(dm('b'))).status).toBe('completed');
    expect((await runner.handle(dm('a'))).status).toBe('rejected');
    expect((await runner.handle(dm('b'))).status).toBe('rejected');
    await runner.close();
  });

  it('an agent-tier user-message route overrides the plugin gate', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: echo,
          routes: [{ kind: SignalKind.UserMessage, name: 'always', action: Action.Continue }],
        },
      ],
      plugins: [rateLimitPlugin({ perSession: 1, windowMs: 60_000, now: () => 0 })],
    });
    for (let i = 0; i < 3; i++) {
      const o = await runner.handle(dm('1'));
      expect(o.status).toBe('completed');
      expect(o.decidedBy?.tier).toBe('agent');
    }
    await runner.close();
  });

  it('ignores other signal kinds', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine: echo, routes: [{ kind: SignalKind.Timer, action: Action.Continue }] }],
      plugins: [rateLimitPlugin({ perSession: 1, windowMs: 60_000, now: () => 0 })],
    });
    for (let i = 0; i < 3; i++)
      expect((await runner.dispatch('agent:main:main', signal(SignalKind.Timer))).status).toBe('completed');
    expect((await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'hi'))).status).toBe('completed');
    await runner.close();
  });

  it('rejects bad options with a ConfigError listing every problem', () => {
    try {
      rateLimitPlugin({ perSession: 0, windowMs: -1 });
      expect.unreachable();
    } catch (error) {
      expect(ConfigError.isInstance(error)).toBe(true);
      expect((error as ConfigError).problems.map((p) => p.path)).toEqual(['perSession', 'windowMs']);
    }
    expect(() => rateLimitPlugin({ perSession: 1.5, windowMs: 10 })).toThrow(ConfigError);
    expect(() => rateLimitPlugin(null as never)).toThrow(ConfigError);
    expect(() => rateLimitPlugin({ perSession: 1, windowMs: 10, now: 5 as never })).toThrow(ConfigError);
    try {
      rateLimitPlugin({ perSession: 1, windowMs: 10, clock: { now: 'soon' } as never });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        { path: 'clock', message: expect.stringMatching(/expected a Clock.*"soon"/) as unknown },
      ]);
    }
  });
});

describe('auditLogPlugin', () => {
  it('receives one entry per signal with kind, action, tier, route name and status', async () => {
    const log: AuditEntry[] = [];
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          engine: echo,
          routes: [
            {
              kind: SignalKind.UserMessage,
              name: 'block',
              priority: 1,
              predicate: (s) => (s.payload as { text: string }).text === 'spam',
              action: Action.reject('spam'),
            },
            { kind: SignalKind.Timer, name: 'tick', action: Action.transition('tick') },
          ],
        },
      ],
      plugins: [auditLogPlugin((entry) => log.push(entry))],
    });
    const a = await runner.handle(dm('1', 'hello'));
    await runner.handle(dm('1', 'spam'));
    await runner.dispatch(a.sessionKey, signal(SignalKind.Timer));
    await runner.dispatch(a.sessionKey, signal(SignalKind.ToolResult, {}));
    expect(log.map(({ at: _at, ...rest }) => rest)).toEqual([
      { sessionKey: a.sessionKey, agentId: 'main', kind: 'user_message', action: Action.Continue, status: 'completed' },
      {
        sessionKey: a.sessionKey,
        agentId: 'main',
        kind: 'user_message',
        action: Action.reject('spam'),
        tier: 'agent',
        routeName: 'block',
        status: 'rejected',
      },
      {
        sessionKey: a.sessionKey,
        agentId: 'main',
        kind: 'timer',
        action: Action.transition('tick'),
        tier: 'agent',
        routeName: 'tick',
        status: 'completed',
      },
      { sessionKey: a.sessionKey, agentId: 'main', kind: 'tool_result', status: 'unrouted' },
    ]);
    for (const e of log) expect(Number.isNaN(Date.parse(e.at))).toBe(false);
    await runner.close();
  });

  it('a sink that throws becomes a warning and dispatch goes on', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine: echo }],
      plugins: [
        auditLogPlugin(() => {
          throw new Error('disk full');
        }),
      ],
    });
    const warnings: string[] = [];
    runner.on((e) => {
      if (e.type === 'warning') warnings.push(e.message);
    });
    expect((await runner.handle(dm('1'))).status).toBe('completed');
    expect(warnings.some((w) => w.includes('disk full'))).toBe(true);
    await runner.close();
  });

  it('a non-function sink is refused', () => {
    expect(() => auditLogPlugin('log' as never)).toThrow(RunnerError);
  });
});
