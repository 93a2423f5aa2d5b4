// Runner throughput with the otel plugin on and off: user_message signals dispatched round robin
// over 1,000 sessions (history capped at 20) through a 3-tier router, an FSM strategy and a
// trivial engine, with the in-memory store (the shape of packages/signalyard/bench/runner.bench.ts).
// With the plugin on, spans go to a real BasicTracerProvider whose processor only counts them.
// Target (docs/observability.md): the plugin's cost per signal (on minus off) at most 2x its floor,
// the same two spans made straight through the SDK (a signal span with the plugin's seven
// attributes, a turn span under it with one); the time per signal on / off is shown too.
// Every row and figure is also measured with an AsyncLocalStorage active (`…@als`,
// decisions-wave3 §6), as a traced application runs (a context manager keeps one).
import { Action, SignalKind, signal, type ChatMessage, type Plugin, type Signal } from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { otelPlugin } from '@signalyard/otel';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SessionKey, createRunner, formatSessionKey, type Runner, type TurnContext, type TurnResult } from 'signalyard';
import { described, difference, figure, measure, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { modes, withAls } from '../../../scripts/bench/modes.mjs';

const SESSIONS = 1000;
const WORKLOAD = 'otel: runner over 1,000 sessions';

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

const routesPlugin: Plugin = {
  name: 'bench-plugin',
  signalRoutes: () => [
    { kind: SignalKind.UserMessage, name: 'plugin-default', action: Action.reject('plugin') },
    { kind: SignalKind.Timer, name: 'tick', action: Action.custom('tick') },
  ],
};

/** A span processor that only counts ended spans: the SDK does all its work, nothing is exported. */
class CountingProcessor implements SpanProcessor {
  ended = 0;
  onStart(): void {
    // nothing to do at start
  }
  onEnd(_span: ReadableSpan): void {
    this.ended++;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function makeRunner(plugins: readonly Plugin[]): Runner {
  return createRunner({
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
    plugins,
    maxHistoryMessages: 20,
  });
}

const processor = new CountingProcessor();
const provider = new BasicTracerProvider({ spanProcessors: [processor] });
const off = makeRunner([routesPlugin]);
const on = makeRunner([routesPlugin, otelPlugin({ tracer: provider.getTracer('otel-bench') })]);
await off.start();
await on.start();

const keys = Array.from({ length: SESSIONS }, (_, i) => formatSessionKey(SessionKey.main('main', `s${i}`)));
const message: Signal = signal(SignalKind.UserMessage, 'hello');

// Warm every session (loaded, router composed) and check the path is the one we mean to measure.
for (const runner of [off, on]) {
  for (const key of keys) {
    const outcome = await runner.dispatch(key, message);
    if (outcome.status !== 'completed' || outcome.decidedBy?.route.name !== 'chat')
      throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`);
  }
}
// Each signal with the plugin on is a signalyard.signal span and its signalyard.turn span.
if (processor.ended !== 2 * SESSIONS) throw new Error(`expected ${2 * SESSIONS} spans, got ${processor.ended}`);

const dispatchAll = (runner: Runner) => async (): Promise<void> => {
  const pending: Promise<unknown>[] = new Array<Promise<unknown>>(SESSIONS);
  for (let i = 0; i < SESSIONS; i++) pending[i] = runner.dispatch(keys[i]!, message);
  await Promise.all(pending);
};

// The floor: what the plugin records for one signal, straight through the SDK.
const floorTracer = new BasicTracerProvider({ spanProcessors: [new CountingProcessor()] }).getTracer('otel-floor');
const twoSpans = (): void => {
  for (let i = 0; i < SESSIONS; i++) {
    const span = floorTracer.startSpan('signalyard.signal');
    span.setAttribute('signalyard.session_key', keys[i]!);
    span.setAttribute('signalyard.agent_id', 'main');
    span.setAttribute('signalyard.signal_kind', 'user_message');
    const turn = floorTracer.startSpan('signalyard.turn', undefined, trace.setSpan(context.active(), span));
    turn.setAttribute('signalyard.status', 'completed');
    turn.end();
    span.setAttribute('signalyard.action', 'continue');
    span.setAttribute('signalyard.tier', 'agent');
    span.setAttribute('signalyard.route', 'chat');
    span.setAttribute('signalyard.status', 'completed');
    span.end();
  }
};

const results = await measure(
  withAls([
    { name: 'runner.dispatch, otel plugin off', batch: SESSIONS, fn: dispatchAll(off) },
    { name: 'runner.dispatch, otel plugin on', batch: SESSIONS, fn: dispatchAll(on) },
    { name: 'floor: the same 2 spans through the SDK', batch: SESSIONS, fn: twoSpans },
  ]),
  { time: 1000, warmupTime: 300 },
);
printTable(
  '@signalyard/otel: Runner dispatch over 1,000 sessions, FSM + 3-tier router + trivial engine, memory store (per signal)',
  results,
);
for (const [[withoutPlugin, withPlugin, sdkFloor], mode] of modes(results)) {
  const pluginCost = difference(withPlugin!, withoutPlugin!);
  figure({
    workload: WORKLOAD,
    name: `the plugin's cost per signal (on − off) / its SDK floor${mode}`,
    unit: 'x',
    samples: pluginCost.map((ns, i) => ns / sdkFloor!.samples[i]!),
    target: { atMost: 2 },
    against: described(sdkFloor!, `floor: 2 spans through the SDK${mode}`),
  });
  figure({
    workload: WORKLOAD,
    name: `the plugin's cost per signal (2 spans)${mode}`,
    unit: 'ns',
    samples: pluginCost,
  });
  figure({
    workload: WORKLOAD,
    name: `time per signal, otel plugin on / off${mode}`,
    unit: 'x',
    samples: ratio(withPlugin!, withoutPlugin!),
    against: described(withoutPlugin!, `plugin off${mode}`),
  });
}
await off.close();
await on.close();
await provider.shutdown();
