// Runner throughput: user_message signals dispatched round robin over 1,000 sessions (history
// capped at 20) through a 3-tier router (an FSM strategy's routes, agent routes, a plugin's
// routes), an FSM strategy and a trivial engine, with the in-memory store.
// Target (issue 24): >= 300,000 signals per second;
// the floor is the engine alone, awaited the same way. Also the Runner's own overhead per signal
// (dispatch minus engine). Both also with an AsyncLocalStorage active (`…@als`, decisions-wave3
// §6): the target holds in both modes. A figure out of reach is followed by a CPU profile of it.
import { Action, SignalKind, signal, type ChatMessage, type Plugin, type Signal } from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { SessionKey, formatSessionKey } from '@signalyard/sessions';
import { createRunner, type TurnContext, type TurnResult } from 'signalyard';
import { described, difference, figure, measure, perSecond, printTable } from '../../../scripts/bench/harness.mjs';
import { ALS, inAls, modes, withAls } from '../../../scripts/bench/modes.mjs';
import { explainIfMissed } from '../../../scripts/bench/profile.mjs';

const SESSIONS = 1000;
const WORKLOAD = 'runner: user_message over 1,000 sessions';

const definition = FsmStrategy.builder()
  .initial('idle')
  .transition('idle', 'start', 'working')
  .transition('working', 'finish', 'idle')
  .route(
    {
      kind: SignalKind.UserMessage,
      name: 'gate',
      action: Action.reject('busy'),
      predicate: (s) => s.payload === 'blocked',
    },
    { inStates: ['working'] },
  )
  .route({ kind: SignalKind.Stop, name: 'stop', action: Action.ForceStop })
  .define();

const reply: readonly ChatMessage[] = [{ role: 'assistant', content: 'ok' }];
const engine = (_ctx: TurnContext): Promise<TurnResult> => Promise.resolve({ messages: reply });

const plugin: Plugin = {
  name: 'bench-plugin',
  signalRoutes: () => [
    { kind: SignalKind.UserMessage, name: 'plugin-default', action: Action.reject('plugin') },
    { kind: SignalKind.Timer, name: 'tick', action: Action.custom('tick') },
  ],
};

const runner = createRunner({
  agents: [
    {
      id: 'main',
      strategy: () => definition.create(),
      routes: [
        {
          kind: SignalKind.UserMessage,
          name: 'command',
          priority: 10,
          predicate: (s) => typeof s.payload === 'string' && s.payload.startsWith('/'),
          action: Action.transition('start'),
        },
        { kind: SignalKind.UserMessage, name: 'chat', action: Action.Continue },
      ],
      engine,
    },
  ],
  plugins: [plugin],
  maxHistoryMessages: 20,
});
await runner.start();

const keys = Array.from({ length: SESSIONS }, (_, i) => formatSessionKey(SessionKey.main('main', `s${i}`)));
const message: Signal = signal(SignalKind.UserMessage, 'hello');

// Warm every session (loaded, router composed) and check the path is the one we mean to measure.
for (const key of keys) {
  const outcome = await runner.dispatch(key, message);
  if (outcome.status !== 'completed' || outcome.decidedBy?.route.name !== 'chat')
    throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`);
}

const fakeCtx = { history: [] } as unknown as TurnContext;
const dispatchAll = async (): Promise<void> => {
  const pending: Promise<unknown>[] = new Array<Promise<unknown>>(SESSIONS);
  for (let i = 0; i < SESSIONS; i++) pending[i] = runner.dispatch(keys[i]!, message);
  await Promise.all(pending);
};
const results = await measure(
  withAls([
    {
      name: 'engine alone (awaited)',
      batch: SESSIONS,
      fn: async () => {
        for (let i = 0; i < SESSIONS; i++) await engine(fakeCtx);
      },
    },
    {
      name: 'runner.dispatch, 1,000 sessions round robin',
      batch: SESSIONS,
      fn: dispatchAll,
    },
  ]),
  { time: 1000, warmupTime: 300 },
);
printTable(
  'signalyard Runner: user_message over 1,000 sessions, FSM + 3-tier router + trivial engine, memory store (per signal)',
  results,
);
for (const [[engineOnly, dispatch], mode] of modes(results)) {
  const rate = figure({
    workload: WORKLOAD,
    name: `runner.dispatch signals per second${mode}`,
    unit: '/s',
    samples: perSecond(dispatch!),
    target: { atLeast: 300_000 },
    against: `floor: ${described(engineOnly!, 'engine alone', '/s')}`,
  });
  figure({
    workload: WORKLOAD,
    name: `Runner's own overhead per signal (dispatch minus engine)${mode}`,
    unit: 'ns',
    samples: difference(dispatch!, engineOnly!),
  });
  // Out of reach: where the time goes (1,000 signals per call), in the figure's mode.
  await explainIfMissed(rate, mode === ALS ? () => inAls(dispatchAll) : dispatchAll, { runs: 100 });
}
await runner.close();
