// Checkpoint store throughput: save+load round trips per second for MemoryCheckpointStore and
// SqliteCheckpointStore (a file in WAL mode, synchronous = NORMAL), and Runner dispatch
// throughput with each store (the shape of packages/signalyard/bench/runner.bench.ts:
// user_message signals round robin over 1,000 sessions, history capped at 20, an FSM strategy,
// a 3-tier router and a trivial engine), printed with the machine they were measured on; and
// the cost of history (scripts/bench/history-cost.mjs): a save with keepVersions 20 against one
// with keepVersions 0 (target <= 1.5x), and history() of a session with 20 kept versions (target
// <= 1 ms). Dispatch target (issue 24): >= 20k signals/s with the SQLite store.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Action,
  MemoryCheckpointStore,
  SignalKind,
  signal,
  type ChatMessage,
  type CheckpointStore,
  type Plugin,
  type Signal,
} from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { SessionKey, createRunner, formatSessionKey, type TurnContext, type TurnResult } from 'signalyard';
import { described, figure, measure, perSecond, printTable } from '../../../scripts/bench/harness.mjs';
import { historyCost } from '../../../scripts/bench/history-cost.mjs';
import { modes, withAls } from '../../../scripts/bench/modes.mjs';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-store-bench-'));
const machine = `${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}, ${process.platform}`;

// ---------------------------------------------------------------- save + load round trips

/** A checkpoint as the Runner writes it: FSM snapshot, 20 history messages (~2 KB of JSON). */
const checkpoint = {
  v: 1,
  agentId: 'main',
  strategy: { type: 'fsm', current_state: 'working' },
  history: Array.from({ length: 20 }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `message ${i}: ${'lorem ipsum '.repeat(6)}`,
  })),
  engine: { turns: 10 },
};
console.log(`\nOne checkpoint is ${JSON.stringify(checkpoint).length} bytes of JSON.`);

const ROUND_TRIPS = 200;
const KEYS = 100;

function roundTrips(store: CheckpointStore): () => Promise<void> {
  const keys = Array.from({ length: KEYS }, (_, i) => `agent:main:bench-${i}`);
  const versions = new Array<number>(KEYS).fill(0);
  return async () => {
    for (let i = 0; i < ROUND_TRIPS; i++) {
      const k = i % KEYS;
      const key = keys[k]!;
      versions[k] = await store.save(key, checkpoint, versions[k]!);
      const loaded = await store.load(key);
      if (loaded?.version !== versions[k]) throw new Error(`round trip lost a write on ${key}`);
    }
  };
}

const memoryStore = new MemoryCheckpointStore();
const sqliteStore = new SqliteCheckpointStore({ path: join(dir, 'round-trips.db') });
const stores = await measure(
  [
    { name: 'MemoryCheckpointStore save+load', batch: ROUND_TRIPS, fn: roundTrips(memoryStore) },
    { name: 'SqliteCheckpointStore (file, WAL) save+load', batch: ROUND_TRIPS, fn: roundTrips(sqliteStore) },
  ],
  { time: 1000, warmupTime: 300 },
);
await memoryStore.close();
await sqliteStore.close();
printTable(`Checkpoint stores: save + load round trips (per round trip) on ${machine}`, stores);

// ---------------------------------------------------------------- history

let files = 0;
await historyCost({
  label: 'store-sqlite',
  open: ({ keepVersions }) =>
    Promise.resolve(new SqliteCheckpointStore({ path: join(dir, `history-${++files}.db`), keepVersions })),
  checkpoint,
  machine,
});

// ---------------------------------------------------------------- Runner dispatch

const SESSIONS = 1000;
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
const keys = Array.from({ length: SESSIONS }, (_, i) => formatSessionKey(SessionKey.main('main', `s${i}`)));
const message: Signal = signal(SignalKind.UserMessage, 'hello');

async function dispatchTask(
  name: string,
  store: CheckpointStore,
): Promise<{ task: { name: string; batch: number; fn: () => Promise<void> }; close: () => Promise<void> }> {
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
    store,
    maxHistoryMessages: 20,
  });
  await runner.start();
  // Warm every session (loaded, router composed, history at its cap) and check the path.
  for (let round = 0; round < 10; round++) {
    for (const key of keys) {
      const outcome = await runner.dispatch(key, message);
      if (outcome.status !== 'completed' || outcome.decidedBy?.route.name !== 'chat')
        throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`);
    }
  }
  return {
    task: {
      name,
      batch: SESSIONS,
      fn: async () => {
        const pending = new Array<Promise<unknown>>(SESSIONS);
        for (let i = 0; i < SESSIONS; i++) pending[i] = runner.dispatch(keys[i]!, message);
        await Promise.all(pending);
      },
    },
    close: async () => {
      await runner.close();
      await store.close?.();
    },
  };
}

/**
 * `store` with the time spent in its `save` and `load` calls added up: `load` runs synchronously on
 * the SQLite connection; `save` serialises the checkpoint there, and its statements run in the
 * connection's group commit (one transaction for the saves asked for together), counted in the rest.
 */
function timed(store: CheckpointStore): { store: CheckpointStore; spent: { save: number; load: number } } {
  const spent = { save: 0, load: 0 };
  const proxy = new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (prop !== 'save' && prop !== 'load') return fn.bind(target);
      // Time what the call does before its promise is returned, not the wait for its turn among
      // a thousand concurrent signals (nor for the group commit).
      return (...args: unknown[]) => {
        const started = performance.now();
        const result = fn.apply(target, args);
        spent[prop] += performance.now() - started;
        return result;
      };
    },
  });
  return { store: proxy, spent };
}

const withMemory = await dispatchTask('runner.dispatch, MemoryCheckpointStore', new MemoryCheckpointStore());
const withSqlite = await dispatchTask(
  'runner.dispatch, SqliteCheckpointStore (file, WAL)',
  new SqliteCheckpointStore({ path: join(dir, 'runner.db') }),
);
const profiled = timed(new SqliteCheckpointStore({ path: join(dir, 'profiled.db') }));
const withProfiled = await dispatchTask('runner.dispatch, SqliteCheckpointStore, save/load timed', profiled.store);
// Both modes: as measured, and with an AsyncLocalStorage active (`…@als`, decisions-wave3 §6).
const dispatch = await measure(withAls([withMemory.task, withSqlite.task]), { time: 1000, warmupTime: 300 });
// Where a signal's time goes with the SQLite store: a separate run with save and load timed.
profiled.spent.save = 0;
profiled.spent.load = 0;
const PROFILED_ROUNDS = 3;
const profileStarted = performance.now();
for (let i = 0; i < PROFILED_ROUNDS; i++) await withProfiled.task.fn();
const perSignalUs = (ms: number): number => (ms * 1000) / (PROFILED_ROUNDS * SESSIONS);
const totalUs = perSignalUs(performance.now() - profileStarted);
const saveUs = perSignalUs(profiled.spent.save);
console.log(
  `\nWhere a signal's time goes with SqliteCheckpointStore (keepVersions 20; ${PROFILED_ROUNDS} rounds over ${SESSIONS} sessions): ` +
    `${totalUs.toFixed(0)} µs per signal, of which store.save ${saveUs.toFixed(0)} µs (${((100 * saveUs) / totalUs).toFixed(0)}%: ` +
    `JSON.stringify of the checkpoint; SQLite's compare-and-set, history row and WAL append run in the group commit, ` +
    `one transaction for the saves asked for together, counted in the rest) and store.load ` +
    `${perSignalUs(profiled.spent.load).toFixed(1)} µs; the rest is the Runner (see the memory store's figure).`,
);
await withMemory.close();
await withSqlite.close();
await withProfiled.close();
rmSync(dir, { recursive: true, force: true });
printTable(
  `Runner: user_message over 1,000 sessions, FSM + 3-tier router + trivial engine (per signal) on ${machine}`,
  dispatch,
);

const [memoryTrip, sqliteTrip] = stores;
console.log(`\nMachine: ${machine}; the round-trip figure has no target.`);
figure({
  workload: 'store-sqlite: save + load, 2 KB checkpoint',
  name: 'SQLite (file, WAL) round trips per second',
  unit: '/s',
  samples: perSecond(sqliteTrip!),
  against: described(memoryTrip!, 'MemoryCheckpointStore', '/s'),
});
for (const [[memoryDispatch, sqliteDispatch], mode] of modes(dispatch)) {
  figure({
    workload: 'store-sqlite: runner over 1,000 sessions',
    name: `runner.dispatch signals per second, SQLite store${mode}`,
    unit: '/s',
    samples: perSecond(sqliteDispatch!),
    target: { atLeast: 20_000 },
    against: described(memoryDispatch!, `memory store${mode}`, '/s'),
  });
}
