import { afterAll, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, SignalKind, SignalyardError, signal, isSignalyardError } from '@signalyard/core';
import { SessionKey, formatSessionKey } from '@signalyard/sessions';
import { RunnerError, createRunner, type InboundMessage } from 'signalyard';
import { MAIN, echoEngine, rejectionOf, thrownBy } from './support.js';

function expectRunnerError(error: unknown, code: string): void {
  expect(RunnerError.isInstance(error)).toBe(true);
  expect(isSignalyardError(error, code)).toBe(true);
}

describe('handle(): route resolution through the sessions contract', () => {
  // The acceptance config of sessions.md.
  const routing = {
    defaultAgentId: 'main',
    session: { dmScope: 'per-peer' as const, identityLinks: { john: ['telegram:123', 'discord:456'] } },
    bindings: [
      { agentId: 'work', match: { channel: 'slack', teamId: 'T12345' } },
      { agentId: 'general', match: { channel: 'telegram' } },
    ],
  };
  const table: { input: InboundMessage; agentId: string; key: string }[] = [
    {
      input: { channel: 'telegram', peer: { kind: 'dm', id: '123' }, text: 'hi' },
      agentId: 'general',
      key: 'agent:general:dm:john',
    },
    {
      input: { channel: 'telegram', peer: { kind: 'group', id: 'grp1' }, text: 'hi' },
      agentId: 'general',
      key: 'agent:general:telegram:group:grp1',
    },
    {
      input: { channel: 'discord', peer: { kind: 'dm', id: '456' }, text: 'hi' },
      agentId: 'main',
      key: 'agent:main:dm:john',
    },
    {
      input: { channel: 'slack', teamId: 'T12345', peer: { kind: 'dm', id: 'user789' }, text: 'hi' },
      agentId: 'work',
      key: 'agent:work:dm:user789',
    },
    { input: { channel: 'cli', text: 'hi' }, agentId: 'main', key: 'agent:main:main' },
  ];

  it.each(table)(
    'sends $input.channel $input.peer to agent $agentId in session $key',
    async ({ input, agentId, key }) => {
      const engines = { main: echoEngine(), general: echoEngine(), work: echoEngine() };
      const runner = createRunner({
        routing,
        agents: [
          { id: 'main', engine: engines.main.engine },
          { id: 'general', engine: engines.general.engine },
          { id: 'work', engine: engines.work.engine },
        ],
      });
      const outcome = await runner.handle(input);
      expect(outcome).toMatchObject({ status: 'completed', agentId, sessionKey: key });
      const seen = engines[agentId as keyof typeof engines].seen;
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ agentId, sessionKey: key });
      expect((await runner.session(key))?.agentId).toBe(agentId);
      await runner.close();
    },
  );

  it('a linked person shares one session across channels', async () => {
    const runner = createRunner({
      routing: { session: { identityLinks: { john: ['telegram:123', 'discord:456'] } } },
      agents: [{ id: 'main', engine: echoEngine().engine }],
    });
    await runner.handle({ channel: 'telegram', peer: { kind: 'dm', id: '123' }, text: 'from telegram' });
    await runner.handle({ channel: 'discord', peer: { kind: 'dm', id: '456' }, text: 'from discord' });
    const view = await runner.session('agent:main:dm:john');
    expect(view?.history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'from telegram',
      'from discord',
    ]);
    await runner.close();
  });

  it('dispatches the message itself as the payload of a user_message signal', async () => {
    const { engine, seen } = echoEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine }] });
    const message: InboundMessage = {
      channel: 'telegram',
      accountId: 'bot1',
      peer: { kind: 'dm', id: '42' },
      text: 'hello',
    };
    await runner.handle(message);
    expect(seen[0]?.signal.kind).toBe(SignalKind.UserMessage);
    expect(seen[0]?.signal.payload).toEqual(message);
    await runner.close();
  });
});

describe('dispatch(): session keys', () => {
  it('accepts a SessionKey object or its string form, and reports the canonical key', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
    const key = SessionKey.task('main', 'cron', 'Nightly');
    const fromObject = await runner.dispatch(key, signal(SignalKind.UserMessage, 'a'));
    const fromString = await runner.dispatch(
      `  ${formatSessionKey(key).toUpperCase()} `,
      signal(SignalKind.UserMessage, 'b'),
    );
    expect(fromObject.sessionKey).toBe('agent:main:cron:nightly');
    expect(fromString.sessionKey).toBe('agent:main:cron:nightly');
    expect((await runner.session(key))?.history.filter((m) => m.role === 'user')).toHaveLength(2);
    await runner.close();
  });

  it("uses the key's agent by default and a subagent key's root agent", async () => {
    const runner = createRunner({
      agents: [
        { id: 'main', engine: echoEngine().engine },
        { id: 'helper', engine: echoEngine().engine },
      ],
    });
    const sub = SessionKey.subagent(SessionKey.main('helper'), 'research');
    const outcome = await runner.dispatch(sub, signal(SignalKind.UserMessage, 'go'));
    expect(outcome).toMatchObject({
      agentId: 'helper',
      sessionKey: 'agent:helper:main:subagent:research',
      status: 'completed',
    });
    await runner.close();
  });

  it('opts.agentId chooses the agent of a new session', async () => {
    const runner = createRunner({
      agents: [
        { id: 'main', engine: echoEngine().engine },
        { id: 'helper', engine: async () => ({ output: 'helper ran' }) },
      ],
    });
    const outcome = await runner.dispatch('agent:main:scratch', signal(SignalKind.UserMessage, 'go'), {
      agentId: 'helper',
    });
    expect(outcome).toMatchObject({ agentId: 'helper', status: 'completed', output: 'helper ran' });
    await runner.close();
  });

  it('a signal for a live session of another agent fails with SESSION_AGENT_MISMATCH', async () => {
    const runner = createRunner({
      agents: [
        { id: 'main', engine: echoEngine().engine },
        { id: 'helper', engine: echoEngine().engine },
      ],
    });
    await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'));
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'), { agentId: 'helper' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('SESSION_AGENT_MISMATCH');
    await runner.close();
  });

  it("a checkpoint saved by another agent fails with SESSION_AGENT_MISMATCH and isn't touched", async () => {
    const store = new MemoryCheckpointStore();
    const first = createRunner({
      store,
      agents: [
        { id: 'main', engine: echoEngine().engine },
        { id: 'helper', engine: echoEngine().engine },
      ],
    });
    await first.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'));
    await first.close();
    const before = await store.load(MAIN);
    const second = createRunner({
      store,
      agents: [
        { id: 'main', engine: echoEngine().engine },
        { id: 'helper', engine: echoEngine().engine },
      ],
    });
    const outcome = await second.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'), { agentId: 'helper' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('SESSION_AGENT_MISMATCH');
    expect(await store.load(MAIN)).toEqual(before);
    await second.close();
  });
});

describe('misuse rejects with RUNNER_INPUT_INVALID', () => {
  const runner = createRunner({ agents: [{ id: 'main', engine: echoEngine().engine }] });
  afterAll(() => runner.close());

  it.each([
    { what: 'no message', message: null },
    { what: 'a message without text', message: { channel: 'cli' } },
    { what: 'a message whose text is not a string', message: { channel: 'cli', text: 42 } },
    { what: 'a message without a channel', message: { text: 'hi' } },
    { what: 'a message with an invalid channel', message: { channel: '!!', text: 'hi' } },
  ])('handle() with $what', async ({ message }) => {
    expectRunnerError(await rejectionOf(runner.handle(message as InboundMessage)), 'RUNNER_INPUT_INVALID');
  });

  it.each([
    { what: 'a malformed session key', key: 'not a key', sig: signal(SignalKind.Timer) },
    { what: 'an empty session key', key: '', sig: signal(SignalKind.Timer) },
    { what: 'a session key that is not a key object', key: { kind: 'nope' }, sig: signal(SignalKind.Timer) },
    { what: 'a value that is not a signal', key: MAIN, sig: 'hello' },
    { what: 'a signal of an unknown kind', key: MAIN, sig: { kind: 'shout', payload: null } },
    { what: 'null for the signal', key: MAIN, sig: null },
  ])('dispatch() with $what', async ({ key, sig }) => {
    expectRunnerError(await rejectionOf(runner.dispatch(key as string, sig as never)), 'RUNNER_INPUT_INVALID');
  });

  it('dispatch() to a session key of an unknown agent', async () => {
    const error = await rejectionOf(runner.dispatch('agent:ghost:main', signal(SignalKind.UserMessage, 'hi')));
    expectRunnerError(error, 'RUNNER_INPUT_INVALID');
    expect((error as Error).message).toContain('ghost');
  });

  it('dispatch() with an unknown opts.agentId', async () => {
    expectRunnerError(
      await rejectionOf(runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'), { agentId: 'ghost' })),
      'RUNNER_INPUT_INVALID',
    );
  });

  it('session() with a malformed key', async () => {
    expectRunnerError(await rejectionOf(runner.session('agent:')), 'RUNNER_INPUT_INVALID');
  });

  it('on() with something that is not a function throws', () => {
    expectRunnerError(
      thrownBy(() => runner.on('listener' as never)),
      'RUNNER_INPUT_INVALID',
    );
  });

  it('a rejected call leaves no session behind', async () => {
    await rejectionOf(runner.dispatch('agent:main:untouched', 'nope' as never));
    expect(await runner.session('agent:main:untouched')).toBeUndefined();
  });
});

describe('RunnerError', () => {
  it('isInstance matches RunnerErrors and their subclasses only', () => {
    class SubError extends RunnerError {}
    const error = new RunnerError({ code: 'RUNNER_CLOSED', message: 'closed' });
    expect(RunnerError.isInstance(error)).toBe(true);
    expect(RunnerError.isInstance(new SubError({ code: 'ENGINE_FAILED', message: 'x' }))).toBe(true);
    expect(RunnerError.isInstance(new SignalyardError({ code: 'RUNNER_CLOSED', message: 'closed' }))).toBe(false);
    expect(RunnerError.isInstance(new Error('closed'))).toBe(false);
    expect(RunnerError.isInstance({ code: 'RUNNER_CLOSED' })).toBe(false);
    expect(RunnerError.isInstance(null)).toBe(false);
    expect(SignalyardError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'RUNNER_CLOSED', message: 'closed', name: 'RunnerError' });
  });
});
