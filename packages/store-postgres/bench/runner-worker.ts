// One runner process of store.bench.ts (not a benchmark itself): a Runner with the PostgreSQL
// store (a pool of at most 5 connections) and PostgresSessionLock, dispatching user_message
// signals round robin over its own sessions each time it is told to go. Imports the built packages.
//
// argv: <database url> <table> <label> <sessions> <rounds>
// IPC out: { type: 'ready' } once warmed up. IPC in: 'go' (any number of times), answered with
// { type: 'done', signals, ms, failed } after <rounds> rounds over every session; then 'stop',
// after which it closes everything and exits.
import { Action, SignalKind, signal, type ChatMessage } from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { PostgresCheckpointStore, PostgresSessionLock } from '@signalyard/store-postgres';
import { Pool } from 'pg';
import { SessionKey, createRunner, formatSessionKey, type TurnResult } from 'signalyard';

const [url, table, label, sessionsArg, roundsArg] = process.argv.slice(2);
if (url === undefined || table === undefined || label === undefined || process.send === undefined) {
  throw new Error('usage: runner-worker.ts <database url> <table> <label> <sessions> <rounds> (with an IPC channel)');
}
const SESSIONS = Number(sessionsArg);
const ROUNDS = Number(roundsArg);

const pool = new Pool({ connectionString: url, max: 5 });
pool.on('error', () => undefined);
const store = new PostgresCheckpointStore({ pool, table });
const lock = new PostgresSessionLock({ connectionString: url });
const definition = FsmStrategy.builder()
  .initial('idle')
  .transition('idle', 'start', 'working')
  .route({ kind: SignalKind.UserMessage, name: 'chat', action: Action.Continue })
  .define();
const reply: readonly ChatMessage[] = [{ role: 'assistant', content: 'ok' }];
const runner = createRunner({
  agents: [
    {
      id: 'main',
      strategy: () => definition.create(),
      engine: (): Promise<TurnResult> => Promise.resolve({ messages: reply }),
    },
  ],
  store,
  lock,
  maxHistoryMessages: 20,
});
const keys = Array.from({ length: SESSIONS }, (_, i) => formatSessionKey(SessionKey.main('main', `${label}-${i}`)));
const message = signal(SignalKind.UserMessage, 'hello');

async function round(): Promise<number> {
  const outcomes = await Promise.all(keys.map((key) => runner.dispatch(key, message)));
  return outcomes.filter((o) => o.status !== 'completed').length;
}

// Warm up: every session saved, history filling towards its cap.
for (let i = 0; i < 3; i++) await round();
process.on('message', (command) => {
  void (async () => {
    if (command === 'stop') {
      await runner.close();
      await lock.close();
      await store.close();
      await pool.end();
      process.disconnect();
      return;
    }
    const started = performance.now();
    let failed = 0;
    for (let i = 0; i < ROUNDS; i++) failed += await round();
    const ms = performance.now() - started;
    process.send?.({ type: 'done', signals: SESSIONS * ROUNDS, ms, failed });
  })();
});
process.send({ type: 'ready' });
