// AgentDefinition.whenBusy: what a user message arriving while its session is busy does.
// Engines are held open by deferred promises (support.ts heldEngine): no sleeps.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  Action,
  ConfigError,
  MemoryCheckpointStore,
  SignalKind,
  signal,
  type Outcome,
  type SignalRoute,
  type TurnEvent,
} from '@signalyard/core';
import { createRunner, type AgentDefinition, type Runner, type TurnContext, type WhenBusy } from 'signalyard';
import { collect, expectCode, thrown } from '@signalyard/test-utils';
import { MAIN, assistant, deferred, heldEngine, stored, track, user, userTexts, wrapStore } from './support.js';

const say = (runner: Runner, text: string): Promise<Outcome> => runner.handle({ channel: 'cli', text });
const textsOf = (ctx: TurnContext): unknown[] => ctx.signals.map((s) => (s.payload as { text: string }).text);
/** Lets every pending promise job and I/O callback run (no timer, no wall clock). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A user message whose text is "spam" is rejected by the agent tier. */
const spamGate: SignalRoute = {
  kind: SignalKind.UserMessage,
  action: Action.reject('spam'),
  name: 'spam-gate',
  predicate: (s) => (s.payload as { text?: unknown }).text === 'spam',
};

function runnerWith(whenBusy: WhenBusy | undefined, extra: Partial<AgentDefinition> = {}) {
  const held = heldEngine();
  const store = new MemoryCheckpointStore();
  const runner = createRunner({
    store,
    agents: [{ id: 'main', engine: held.engine, ...(whenBusy !== undefined && { whenBusy }), ...extra }],
  });
  return { held, store, runner };
}

describe("whenBusy: 'collect'", () => {
  it('merges every message that arrived during a turn into one engine run; each caller gets its outcome; history keeps each once, in arrival order', async () => {
    const { held, store, runner } = runnerWith('collect');
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const rest = ['b', 'c', 'd'].map((t) => say(runner, t));
    turn0.finish({ output: 'R0', messages: [assistant('r0')] });
    const turn1 = await held.turn(1);
    expect(textsOf(turn1.ctx)).toEqual(['b', 'c', 'd']);
    expect(turn1.ctx.signal).toBe(turn1.ctx.signals[2]);
    expect(turn1.ctx.history).toEqual([user('a'), assistant('r0'), user('b'), user('c'), user('d')]);
    turn1.finish({ output: 'R1', messages: [assistant('r1')] });
    const outcomes = await Promise.all(rest);
    for (const o of outcomes)
      expect(o).toMatchObject({ status: 'completed', output: 'R1', mergedWith: 3, action: Action.Continue });
    const first = await a;
    expect(first).toMatchObject({ status: 'completed', output: 'R0' });
    expect(first).not.toHaveProperty('mergedWith');
    expect(held.turns).toHaveLength(2);
    const { version, data } = await stored(store, MAIN);
    expect(data.history).toEqual([user('a'), assistant('r0'), user('b'), user('c'), user('d'), assistant('r1')]);
    expect(version).toBe(2); // one version per turn: the merged one included
    expect(data.cause).toMatchObject({ merged: 3, status: 'completed', signal: { kind: 'user_message', text: 'd' } });
    const versions = await collect(runner.history(MAIN));
    expect(versions.map((v) => v.cause?.merged)).toEqual([3, undefined]);
    await runner.close();
  });

  it('a message routed to reject during collection is answered rejected, stays in the history and is left out of the merged turn', async () => {
    const { held, store, runner } = runnerWith('collect', { routes: [spamGate] });
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const b = say(runner, 'b');
    const spam = say(runner, 'spam');
    const c = say(runner, 'c');
    turn0.finish({ messages: [assistant('r0')] });
    const turn1 = await held.turn(1);
    expect(textsOf(turn1.ctx)).toEqual(['b', 'c']);
    expect(await spam).toMatchObject({ status: 'rejected', action: Action.reject('spam') });
    expect(await spam).not.toHaveProperty('mergedWith');
    turn1.finish({ output: 'both', messages: [assistant('r1')] });
    expect(await b).toMatchObject({ status: 'completed', output: 'both', mergedWith: 2 });
    expect(await c).toMatchObject({ status: 'completed', output: 'both', mergedWith: 2 });
    expect((await a).status).toBe('completed');
    const { data } = await stored(store, MAIN);
    expect(data.history).toEqual([user('a'), assistant('r0'), user('b'), user('spam'), user('c'), assistant('r1')]);
    expect(data.cause?.merged).toBe(2);
    await runner.close();
  });

  it('each merged caller keeps its own action and route', async () => {
    const loud: SignalRoute = {
      kind: SignalKind.UserMessage,
      action: Action.Continue,
      name: 'loud',
      predicate: (s) => (s.payload as { text: string }).text.endsWith('!'),
    };
    const { held, runner } = runnerWith('collect', { routes: [loud] });
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const quiet = say(runner, 'quiet');
    const shout = say(runner, 'shout!');
    turn0.finish();
    (await held.turn(1)).finish({ output: 'ok' });
    expect((await quiet).decidedBy).toBeUndefined();
    expect((await shout).decidedBy).toMatchObject({ tier: 'agent', route: { name: 'loud' } });
    await a;
    await runner.close();
  });

  it('a batch ends at the first queued signal of another kind, which is applied in its place', async () => {
    const ping = SignalKind.custom('ping');
    const { held, store, runner } = runnerWith('collect', {
      routes: [{ kind: ping, action: Action.reject('pong'), name: 'ping' }],
    });
    const order: string[] = [];
    const note = (label: string) => (o: Outcome) => {
      order.push(`${label}:${o.status}`);
      return o;
    };
    const a = say(runner, 'a').then(note('a'));
    const turn0 = await held.turn(0);
    const b = say(runner, 'b').then(note('b'));
    const c = say(runner, 'c').then(note('c'));
    const p = runner.dispatch(MAIN, signal(ping)).then(note('ping'));
    const d = say(runner, 'd').then(note('d'));
    const e = say(runner, 'e').then(note('e'));
    turn0.finish();
    const turn1 = await held.turn(1);
    expect(textsOf(turn1.ctx)).toEqual(['b', 'c']);
    turn1.finish();
    const turn2 = await held.turn(2);
    expect(textsOf(turn2.ctx)).toEqual(['d', 'e']);
    turn2.finish();
    await Promise.all([a, b, c, p, d, e]);
    expect(order).toEqual(['a:completed', 'b:completed', 'c:completed', 'ping:rejected', 'd:completed', 'e:completed']);
    expect(userTexts((await stored(store, MAIN)).data.history)).toEqual(['a', 'b', 'c', 'd', 'e']);
    await runner.close();
  });

  it('every merged caller’s stream receives the turn’s events', async () => {
    const { held, runner } = runnerWith('collect');
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const b = runner.stream({ channel: 'cli', text: 'b' });
    const c = runner.stream({ channel: 'cli', text: 'c' });
    turn0.finish();
    const turn1 = await held.turn(1);
    expect(turn1.ctx.streaming).toBe(true);
    turn1.ctx.emitText('hello');
    turn1.finish({ output: 'done' });
    const textOf = (events: TurnEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : [])).join('');
    const [eventsB, eventsC] = await Promise.all([collect(b), collect(c)]);
    expect(textOf(eventsB)).toBe('hello');
    expect(textOf(eventsC)).toBe('hello');
    expect(eventsB.at(-1)).toMatchObject({ type: 'outcome', outcome: { mergedWith: 2, output: 'done' } });
    await a;
    await runner.close();
  });

  it("one caller's abortSignal stops just its message: the merged turn answers the others, and the history keeps it", async () => {
    const { held, store, runner } = runnerWith('collect');
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const abort = new AbortController();
    const b = runner.handle({ channel: 'cli', text: 'b' }, { abortSignal: abort.signal });
    const c = say(runner, 'c');
    turn0.finish();
    const turn1 = await held.turn(1);
    abort.abort();
    expect((await b).status).toBe('stopped');
    expect(turn1.ctx.abortSignal.aborted).toBe(false);
    turn1.finish({ output: 'for c' });
    expect(await c).toMatchObject({ status: 'completed', output: 'for c', mergedWith: 2 });
    await a;
    expect(userTexts((await stored(store, MAIN)).data.history)).toEqual(['a', 'b', 'c']);
    await runner.close();
  });

  it('a force_stop stops every caller of the merged turn and the messages queued behind it', async () => {
    const { held, store, runner } = runnerWith('collect', {
      routes: [{ kind: SignalKind.Stop, action: Action.ForceStop }],
    });
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const b = say(runner, 'b');
    const c = say(runner, 'c');
    turn0.finish();
    const turn1 = await held.turn(1);
    const d = say(runner, 'd');
    const stop = runner.dispatch(MAIN, signal(SignalKind.Stop));
    expect(turn1.ctx.abortSignal.aborted).toBe(true);
    expect((await stop).status).toBe('completed');
    expect((await d).status).toBe('stopped');
    expect((await b).status).toBe('stopped');
    expect((await c).status).toBe('stopped');
    await a;
    // The stopped turn's effects are discarded; what arrived is kept.
    expect(userTexts((await stored(store, MAIN)).data.history)).toEqual(['a', 'b', 'c']);
    await runner.close();
  });

  it('other signal kinds are never merged: each custom signal routed to continue runs its own turn', async () => {
    const tick = SignalKind.custom('tick');
    const { held, runner } = runnerWith('collect', { routes: [{ kind: tick, action: Action.Continue }] });
    const first = runner.dispatch(MAIN, signal(tick, 1));
    const turn0 = await held.turn(0);
    const second = runner.dispatch(MAIN, signal(tick, 2));
    const third = runner.dispatch(MAIN, signal(tick, 3));
    turn0.finish();
    (await held.turn(1)).finish();
    (await held.turn(2)).finish();
    expect(held.turns.map((t) => t.ctx.signals.length)).toEqual([1, 1, 1]);
    for (const o of await Promise.all([first, second, third])) expect(o).not.toHaveProperty('mergedWith');
    await runner.close();
  });
});

describe("whenBusy: 'queue' (the default)", () => {
  it('runs one turn per message, in arrival order, with TurnContext.signals holding just the signal', async () => {
    for (const whenBusy of [undefined, 'queue'] as const) {
      const { held, runner } = runnerWith(whenBusy);
      const a = say(runner, 'a');
      const turn0 = await held.turn(0);
      const b = say(runner, 'b');
      const c = say(runner, 'c');
      turn0.finish();
      (await held.turn(1)).finish();
      (await held.turn(2)).finish();
      await Promise.all([a, b, c]);
      expect(held.turns.map((t) => textsOf(t.ctx))).toEqual([['a'], ['b'], ['c']]);
      await runner.close();
    }
  });
});

describe("whenBusy: 'interrupt'", () => {
  it('a new message interrupts the running turn at its next safe point (its abortSignal never fires; its caller: stopped; what it completed is saved); one turn then answers with both in the history', async () => {
    const { held, store, runner } = runnerWith('interrupt');
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const b = say(runner, 'b');
    // An engine without safe points of its own runs to its end: nothing it did is hidden.
    expect(turn0.ctx.abortSignal.aborted).toBe(false);
    await settle();
    expect(held.turns).toHaveLength(1);
    turn0.finish({ output: 'late', messages: [assistant('effect of a')] });
    expect(await a).toMatchObject({ status: 'stopped', action: Action.Continue });
    expect(await a).not.toHaveProperty('output');
    const turn1 = await held.turn(1);
    expect(textsOf(turn1.ctx)).toEqual(['b']);
    expect(turn1.ctx.history).toEqual([user('a'), assistant('effect of a'), user('b')]);
    turn1.finish({ output: 'both', messages: [assistant('r')] });
    expect(await b).toMatchObject({ status: 'completed', output: 'both' });
    expect((await stored(store, MAIN)).data.history).toEqual([
      user('a'),
      assistant('effect of a'),
      user('b'),
      assistant('r'),
    ]);
    await runner.close();
  });

  it('messages arriving while the interrupting turn starts collect into it', async () => {
    const held = heldEngine();
    const inner = new MemoryCheckpointStore();
    const holdSave = { gate: undefined as ReturnType<typeof deferred> | undefined };
    const store = wrapStore(inner, {
      save: async (_key, _data, _expected, next) => {
        const gate = holdSave.gate;
        if (gate !== undefined) await gate.promise;
        return next();
      },
    });
    const runner = createRunner({ store, agents: [{ id: 'main', engine: held.engine, whenBusy: 'interrupt' }] });
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    holdSave.gate = deferred(); // the stopped turn's save waits: the interrupting turn cannot start yet
    const b = say(runner, 'b');
    expect(turn0.ctx.abortSignal.aborted).toBe(false);
    turn0.finish(); // its safe point
    const c = say(runner, 'c');
    const d = say(runner, 'd');
    await settle();
    expect(held.turns).toHaveLength(1);
    const gate = holdSave.gate;
    holdSave.gate = undefined;
    gate.resolve(undefined);
    const turn1 = await held.turn(1);
    expect(textsOf(turn1.ctx)).toEqual(['b', 'c', 'd']);
    turn1.finish({ output: 'all' });
    expect((await a).status).toBe('stopped');
    for (const o of await Promise.all([b, c, d])) expect(o).toMatchObject({ output: 'all', mergedWith: 3 });
    expect(userTexts((await stored(inner, MAIN)).data.history)).toEqual(['a', 'b', 'c', 'd']);
    await runner.close();
  });

  it('only a continue decision interrupts: a message routed to reject waits and is answered rejected', async () => {
    const { held, store, runner } = runnerWith('interrupt', { routes: [spamGate] });
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const spam = track(say(runner, 'spam'));
    expect(turn0.ctx.abortSignal.aborted).toBe(false);
    await settle();
    expect(spam.settled).toBe(false);
    turn0.finish({ output: 'R0', messages: [assistant('r0')] });
    expect(await a).toMatchObject({ status: 'completed', output: 'R0' });
    expect((await spam.promise).status).toBe('rejected');
    expect((await stored(store, MAIN)).data.history).toEqual([user('a'), assistant('r0'), user('spam')]);
    await runner.close();
  });

  it('a turn started by another signal kind is never interrupted: it finishes first', async () => {
    const tick = SignalKind.custom('tick');
    const { held, runner } = runnerWith('interrupt', { routes: [{ kind: tick, action: Action.Continue }] });
    const timer = runner.dispatch(MAIN, signal(tick));
    const turn0 = await held.turn(0);
    const b = say(runner, 'b');
    expect(turn0.ctx.abortSignal.aborted).toBe(false);
    turn0.finish({ output: 'tick done' });
    expect(await timer).toMatchObject({ status: 'completed', output: 'tick done' });
    (await held.turn(1)).finish();
    expect((await b).status).toBe('completed');
    await runner.close();
  });

  it('the interrupting turn can itself be interrupted once its engine runs', async () => {
    const { held, store, runner } = runnerWith('interrupt');
    const a = say(runner, 'a');
    const turn0 = await held.turn(0);
    const b = say(runner, 'b');
    turn0.finish();
    const turn1 = await held.turn(1);
    const c = say(runner, 'c');
    expect(turn1.ctx.abortSignal.aborted).toBe(false);
    turn1.finish();
    const turn2 = await held.turn(2);
    expect(turn2.ctx.history.map((m) => m.content)).toEqual(['a', 'b', 'c']);
    turn2.finish();
    expect((await a).status).toBe('stopped');
    expect((await b).status).toBe('stopped');
    expect((await c).status).toBe('completed');
    expect(userTexts((await stored(store, MAIN)).data.history)).toEqual(['a', 'b', 'c']);
    await runner.close();
  });
});

describe('whenBusy validation', () => {
  it.each([['sometimes'], [42], [null]])('createRunner refuses whenBusy %o with a ConfigError naming it', (bad) => {
    const error = thrown(() =>
      createRunner({
        agents: [{ id: 'main', engine: async () => ({}), whenBusy: bad as WhenBusy }],
      }),
    );
    expectCode(error, 'CONFIG_INVALID');
    expect(ConfigError.isInstance(error)).toBe(true);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path).toBe('agents[0].whenBusy');
    expect(problems[0]?.message).toContain(JSON.stringify(bad));
    expect(problems[0]?.message).toContain('"collect"');
  });

  it('accepts each policy', async () => {
    for (const whenBusy of ['queue', 'collect', 'interrupt'] as const) {
      const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({ output: 1 }), whenBusy }] });
      expect((await say(runner, 'x')).status).toBe('completed');
      await runner.close();
    }
  });
});

/**
 * One random schedule: `send` a new message, `burst` two in the same tick, or `finish` the turns
 * still open. Whatever the
 * interleaving, every message is in the history exactly once, in send order, and every call
 * settles.
 */
async function runSchedule(whenBusy: WhenBusy, ops: readonly ('send' | 'burst' | 'finish')[]): Promise<void> {
  const { held, store, runner } = runnerWith(whenBusy);
  const sent: string[] = [];
  const calls: Promise<Outcome>[] = [];
  let finished = 0;
  const finishOpen = (): void => {
    for (; finished < held.turns.length; finished++)
      held.turns[finished]?.finish({ messages: [assistant(`r${finished}`)] });
  };
  const send = (): void => {
    const text = `m${sent.length}`;
    sent.push(text);
    calls.push(say(runner, text));
  };
  for (const op of ops) {
    if (op === 'finish') finishOpen();
    else {
      send();
      if (op === 'burst') send();
    }
    await settle();
  }
  const all = Promise.all(calls);
  const done = track(all);
  while (!done.settled) {
    finishOpen();
    await settle();
  }
  const outcomes = await all;
  expect(outcomes.every((o) => o.status === 'completed' || o.status === 'stopped')).toBe(true);
  if (sent.length > 0) expect(userTexts((await stored(store, MAIN)).data.history)).toEqual(sent);
  await runner.close();
}

describe('property: random arrival interleavings keep order and exactly-once', () => {
  const schedule = fc.array(fc.constantFrom('send' as const, 'burst' as const, 'finish' as const), {
    minLength: 1,
    maxLength: 40,
  });
  for (const whenBusy of ['queue', 'collect', 'interrupt'] as const) {
    it(`whenBusy: '${whenBusy}'`, async () => {
      await fc.assert(
        fc.asyncProperty(schedule, async (ops) => {
          await runSchedule(whenBusy, ops);
        }),
        { numRuns: 60 },
      );
    });
  }
});
