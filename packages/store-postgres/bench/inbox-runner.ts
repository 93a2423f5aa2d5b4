// One runner process of inbox.bench.ts (not a benchmark itself), over the PostgreSQL store table
// and inbox table it is given, with the bench's agent (a trivial engine, history capped at 20):
// - `worker`: a worker Runner (leaseMs 30 s, pollMs 100) settling the inbox until told 'stop';
// - `plain`: a Runner without an inbox over its own sessions; each 'go' dispatches <count>
//   signals round robin over them, <window> in flight, answered { type: 'done', ms, failed };
// - `stuck`: a worker (leaseMs 2,000, pollMs 100) whose engine never finishes: it reports
//   { type: 'turn' } when a turn started, and holds the lease until it is killed.
// Reports { type: 'ready' } once started; 'trips' is answered with the worker's round trips to
// the server by statement, counted client side. Imports the built packages.
//
// argv: <database url> <store table> <inbox table> <mode> <label> <sessions> <count> <window>
// env BENCH_ALS=1: everything runs with an AsyncLocalStorage active (a store set from the start,
// and around each command), as in an application with a tracing context manager (decisions-wave3 §6).
import { SignalKind, signal, type ChatMessage } from '@signalyard/core';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from 'pg';
import { createRunner, type AgentDefinition, type RunnerOptions, type TurnResult } from 'signalyard';

const [url, storeTable, inboxTable, mode, label, sessionsArg, countArg, windowArg] = process.argv.slice(2);
if (url === undefined || storeTable === undefined || inboxTable === undefined || process.send === undefined)
  throw new Error('usage: started by inbox.bench.ts (with an IPC channel)');
const als = new AsyncLocalStorage<object>();
const STORE = Object.freeze({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' });
const withAls = process.env.BENCH_ALS === '1';
// Set before anything is made: the runner's connections, timers and promises carry it.
if (withAls) als.enterWith(STORE);
const SESSIONS = Number(sessionsArg);
const COUNT = Number(countArg);
const WINDOW = Number(windowArg);

/** Round trips by statement (its prepared name, or the start of its text) and the time they took, client side: where the time goes. */
const trips = new Map<string, { calls: number; ms: number }>();
if (mode === 'worker') countRoundTrips();

/** Statement text → its label, made once per statement. */
const labels = new Map<string, string>();

function labelOf(raw: string): string {
  const label = raw
    .split(String(storeTable))
    .join('store')
    .split(String(inboxTable))
    .join('inbox')
    .replace(/\s+/g, ' ')
    .slice(0, 72);
  labels.set(raw, label);
  return label;
}

function countRoundTrips(): void {
  const proto = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]): unknown {
    const config = args[0] as string | { name?: string; text?: string };
    const raw = typeof config === 'string' ? config : (config.text ?? config.name ?? '?');
    const label = labels.get(raw) ?? labelOf(raw); // cached: the counting costs the worker little CPU
    const started = performance.now();
    const done = (): void => {
      const t = trips.get(label) ?? { calls: 0, ms: 0 };
      t.calls++;
      t.ms += performance.now() - started;
      trips.set(label, t);
    };
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (...results: unknown[]): unknown => {
        done();
        return (callback as (...r: unknown[]) => unknown)(...results);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args);
    if (result instanceof Promise) result.then(done, done);
    return result;
  };
}

const reply: readonly ChatMessage[] = [{ role: 'assistant', content: 'ok' }];
const agent: AgentDefinition =
  mode === 'stuck'
    ? {
        id: 'main',
        engine: () => {
          process.send?.({ type: 'turn' });
          return new Promise<TurnResult>(() => undefined);
        },
      }
    : { id: 'main', engine: (): Promise<TurnResult> => Promise.resolve({ messages: reply }) };
/** The store's connections under an `application_name` of their own (`<the inbox's>_store`): the bench tells their server CPU apart. */
const storeUrl = new URL(url);
storeUrl.searchParams.set('application_name', `${storeUrl.searchParams.get('application_name') ?? 'sybench'}_store`);
const store = new PostgresCheckpointStore({
  connectionString: storeUrl.toString(),
  table: storeTable,
  maxConnections: 5,
});
const inbox =
  mode === 'plain'
    ? undefined
    : new PostgresInbox({ connectionString: url, table: inboxTable, maxConnections: 5, maxPendingPerSession: 100_000 });
const options: RunnerOptions = { agents: [agent], store, maxHistoryMessages: 20 };
if (inbox !== undefined) {
  options.inbox = inbox;
  options.worker =
    mode === 'stuck'
      ? { id: `stuck-${String(process.pid)}`, leaseMs: 2000, pollMs: 100 }
      : { id: `${String(label)}-${String(process.pid)}`, leaseMs: 30_000, pollMs: 100 };
}
const runner = createRunner(options);
await runner.start();

const keys = Array.from({ length: SESSIONS }, (_, i) => `agent:main:${String(label)}-${String(i)}`);
const message = signal(SignalKind.UserMessage, 'hello');

/** `COUNT` dispatches round robin over the sessions, `WINDOW` in flight; how many did not complete. */
async function burst(): Promise<number> {
  let failed = 0;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < COUNT) {
      const key = keys[next++ % SESSIONS] as string;
      if ((await runner.dispatch(key, message)).status !== 'completed') failed++;
    }
  };
  await Promise.all(Array.from({ length: WINDOW }, lane));
  return failed;
}

process.on('message', (command) => {
  // The IPC channel was opened before the store was set: each command runs inside it again.
  const run = (fn: () => Promise<void>): Promise<void> => (withAls ? als.run(STORE, fn) : fn());
  void run(async () => {
    if (command === 'trips') {
      const cpu = process.cpuUsage();
      process.send?.({
        type: 'trips',
        trips: Object.fromEntries(trips),
        cpuMs: (cpu.user + cpu.system) / 1000,
        elu: performance.eventLoopUtilization(),
      });
      return;
    }
    if (command === 'stop') {
      await runner.close();
      await inbox?.close();
      await store.close();
      process.disconnect();
      return;
    }
    const started = performance.now();
    const failed = await burst();
    process.send?.({ type: 'done', ms: performance.now() - started, failed });
  });
});
if (mode === 'plain') await burst(); // warm up: every session saved
process.send({ type: 'ready', als: als.getStore() !== undefined });
