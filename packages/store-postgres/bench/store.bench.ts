// PostgreSQL store throughput on loopback: save+load round trips per second (one after another,
// and 16 in flight); the cost of history (scripts/bench/history-cost.mjs); Runner dispatch over
// 1,000 sessions in one process, without a lock (target >= 5k signals/s) and with
// PostgresSessionLock, next to what one statement and one commit cost on the server (where the
// time goes); and Runner dispatch throughput with PostgresCheckpointStore and
// PostgresSessionLock — 1 runner process, then 4 processes in aggregate (each with a pool of at
// most 5 connections plus its lock connection, each over its own 250 sessions, user_message
// round robin, an FSM strategy, a trivial engine, history capped at 20), each measured in
// several rounds, printed with the machine they were measured on. Needs the server at DATABASE_URL or
// postgres://postgres@127.0.0.1:5432/test; without one it says so and skips.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Action, SignalKind, signal, type ChatMessage } from '@signalyard/core';
import { FsmStrategy } from '@signalyard/fsm';
import { PostgresCheckpointStore, PostgresSessionLock } from '@signalyard/store-postgres';
import { Pool } from 'pg';
import { SessionKey, createRunner, formatSessionKey, type TurnResult } from 'signalyard';
import {
  MIN_ROUNDS,
  described,
  figure,
  measure,
  median,
  perSecond,
  printTable,
  type BenchTask,
} from '../../../scripts/bench/harness.mjs';
import { historyCost } from '../../../scripts/bench/history-cost.mjs';
import { ALS, withAls } from '../../../scripts/bench/modes.mjs';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const cpu = `${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Node ${process.version}, ${process.platform}`;

const admin = new Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000 });
admin.on('error', () => undefined);
let serverVersion: string;
try {
  serverVersion = String(
    (await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v,
  );
} catch (error) {
  console.log(
    `\n## store-postgres: SKIPPED — no PostgreSQL server at ${url} (${error instanceof Error ? error.message : String(error)})`,
  );
  await admin.end();
  process.exit(0);
}
const machine = `${cpu}, PostgreSQL ${serverVersion} on loopback`;
const tables: string[] = [];
const freshTable = (label: string): string => {
  const table = `sy_bench_${label}_${process.pid}_${randomBytes(3).toString('hex')}`;
  tables.push(table);
  return table;
};

try {
  // -------------------------------------------------------------- save + load round trips

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
  const KEYS = 100;
  const store = new PostgresCheckpointStore({ connectionString: url, table: freshTable('trips'), maxConnections: 16 });
  await store.migrate();
  const versions = new Map<string, number>();
  const trip = async (key: string): Promise<void> => {
    const version = await store.save(key, checkpoint, versions.get(key) ?? 0);
    versions.set(key, version);
    if ((await store.load(key))?.version !== version) throw new Error(`round trip lost a write on ${key}`);
  };
  const SEQUENTIAL = 50;
  const PARALLEL = 16;
  let next = 0;
  const trips = await measure(
    [
      {
        name: 'save+load, one at a time',
        batch: SEQUENTIAL,
        fn: async () => {
          for (let i = 0; i < SEQUENTIAL; i++) await trip(`agent:main:seq-${next++ % KEYS}`);
        },
      },
      {
        name: `save+load, ${PARALLEL} in flight (16 connections)`,
        batch: PARALLEL * 8,
        fn: async () => {
          await Promise.all(
            Array.from({ length: PARALLEL }, async (_, lane) => {
              for (let i = 0; i < 8; i++) await trip(`agent:main:par-${lane}-${i % 4}`);
            }),
          );
        },
      },
    ],
    { time: 1000, warmupTime: 300 },
  );
  await store.close();
  printTable(`PostgresCheckpointStore: save + load round trips (per round trip) on ${machine}`, trips);

  // -------------------------------------------------------------- the cost of history

  await historyCost({
    label: 'store-postgres',
    open: async ({ keepVersions }) => {
      const s = new PostgresCheckpointStore({
        connectionString: url,
        table: freshTable(`keep${keepVersions}`),
        keepVersions,
        maxConnections: 2,
      });
      await s.migrate();
      return s;
    },
    checkpoint,
    machine,
    keys: 20,
    batch: SEQUENTIAL,
  });

  // -------------------------------------------------------------- Runner dispatch, 1,000 sessions in one process

  /**
   * A runner over `SESSIONS` sessions (the shape of the SQLite benchmark's: user_message round
   * robin, FSM, trivial engine, history capped at 20) on a store of its own table, optionally
   * with PostgresSessionLock; one timed call dispatches one signal to every session at once.
   */
  async function inProcessDispatch(
    name: string,
    withLock: boolean,
  ): Promise<{ task: BenchTask; close: () => Promise<void> }> {
    const table = freshTable(withLock ? 'dlock' : 'dplain');
    const dispatchStore = new PostgresCheckpointStore({ connectionString: url, table, maxConnections: POOL });
    await dispatchStore.migrate();
    const lock = withLock ? new PostgresSessionLock({ connectionString: url }) : undefined;
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
      store: dispatchStore,
      ...(lock !== undefined && { lock }),
      maxHistoryMessages: 20,
    });
    const keys = Array.from({ length: SESSIONS }, (_, i) => formatSessionKey(SessionKey.main('main', `d${i}`)));
    const message = signal(SignalKind.UserMessage, 'hello');
    const all = async (): Promise<void> => {
      const outcomes = await Promise.all(keys.map((key) => runner.dispatch(key, message)));
      const failed = outcomes.filter((o) => o.status !== 'completed').length;
      if (failed > 0) throw new Error(`${failed} of ${SESSIONS} signals did not complete`);
    };
    await all(); // every session created
    return {
      task: { name, batch: SESSIONS, once: true, fn: all },
      close: async () => {
        await runner.close();
        await lock?.close();
        await dispatchStore.close();
      },
    };
  }
  const SESSIONS = 1000;
  const POOL = 10;
  const plain = await inProcessDispatch(`runner.dispatch, ${SESSIONS} sessions, pool of ${POOL}`, false);
  const locked = await inProcessDispatch(
    `runner.dispatch, ${SESSIONS} sessions, pool of ${POOL} + PostgresSessionLock`,
    true,
  );
  // Where the time of a save goes: one round trip, and a commit's WAL flush.
  const probe = new Pool({ connectionString: url, max: 1 });
  probe.on('error', () => undefined);
  const probeTable = freshTable('probe');
  await probe.query(`CREATE TABLE ${probeTable} (k int PRIMARY KEY, v text)`);
  await probe.query(`INSERT INTO ${probeTable} VALUES (1, '')`);
  const PROBES = 20;
  const probeTask = (name: string, sql: string): BenchTask => ({
    name,
    batch: PROBES,
    fn: async () => {
      for (let i = 0; i < PROBES; i++) await probe.query(sql);
    },
  });
  // The Runner's rows in both modes: as measured, and with an AsyncLocalStorage active
  // (`…@als`, decisions-wave3 §6); the probes are the database's, one mode is enough.
  const dispatch = await measure(
    [
      ...withAls([plain.task, locked.task]),
      probeTask('SELECT 1 (one round trip)', 'SELECT 1'),
      probeTask(
        'UPDATE of one row, committed (round trip + WAL flush)',
        `UPDATE ${probeTable} SET v = 'x' WHERE k = 1`,
      ),
      probeTask(
        'the same UPDATE with synchronous_commit off (no flush wait)',
        `BEGIN; SET LOCAL synchronous_commit = off; UPDATE ${probeTable} SET v = 'x' WHERE k = 1; COMMIT`,
      ),
    ],
    { time: 1000, warmupTime: 300 },
  );
  await plain.close();
  await locked.close();
  await probe.end();
  printTable(
    `Runner with PostgresCheckpointStore, one process, ${SESSIONS} sessions (per signal) on ${machine}`,
    dispatch,
  );
  const [plainPlain, plainLocked, alsPlain, alsLocked, roundTrip, flushed, unflushed] = dispatch;
  const roundTrips = `a committed one-row UPDATE ${Math.round(flushed!.nsPerOp / 1000).toLocaleString('en-US')} µs (no flush wait ${Math.round(unflushed!.nsPerOp / 1000).toLocaleString('en-US')} µs, SELECT 1 ${Math.round(roundTrip!.nsPerOp / 1000).toLocaleString('en-US')} µs)`;
  for (const [plainResult, lockedResult, mode] of [
    [plainPlain, plainLocked, ''],
    [alsPlain, alsLocked, ALS],
  ] as const) {
    figure({
      workload: `store-postgres: runner over ${SESSIONS} sessions, one process`,
      name: `runner.dispatch signals per second, no lock${mode}`,
      unit: '/s',
      samples: perSecond(plainResult!),
      target: { atLeast: 5000 },
      against: roundTrips,
    });
    figure({
      workload: `store-postgres: runner over ${SESSIONS} sessions, one process`,
      name: `runner.dispatch signals per second, PostgresSessionLock${mode}`,
      unit: '/s',
      samples: perSecond(lockedResult!),
      against: described(plainResult!, `no lock${mode}`, '/s'),
    });
  }

  // -------------------------------------------------------------- Runner dispatch, 1 and 4 processes

  const worker = fileURLToPath(new URL('./runner-worker.ts', import.meta.url));
  const SESSIONS_PER_PROCESS = 250;
  const ROUNDS = 4; // per sample, over every session of a process

  interface Done {
    signals: number;
    ms: number;
    failed: number;
  }
  /** Runs `n` worker processes; returns the aggregate signals per second of each round. */
  async function runProcesses(n: number): Promise<{ samples: number[]; failed: number }> {
    const table = freshTable(`runner${n}`);
    const migrator = new PostgresCheckpointStore({ pool: admin, table });
    await migrator.migrate();
    const children = Array.from({ length: n }, (_, i) =>
      spawn(
        process.execPath,
        ['--import', 'tsx', worker, url, table, `p${i}`, String(SESSIONS_PER_PROCESS), String(ROUNDS)],
        {
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        },
      ),
    );
    const exited = children.map(
      (child) =>
        new Promise<number | null>((resolve) => {
          child.once('exit', resolve);
        }),
    );
    let stopping = false;
    // Rejects when a worker dies before it is told to stop; never settles after.
    const died = exited.map((exit) =>
      exit.then((code) =>
        stopping
          ? new Promise<never>(() => undefined)
          : Promise.reject(new Error(`a runner worker exited with code ${code}`)),
      ),
    );
    for (const d of died) d.catch(() => undefined);
    const next = (child: (typeof children)[number], index: number): Promise<unknown> =>
      Promise.race([new Promise((resolve) => child.once('message', resolve)), died[index]]);
    await Promise.all(children.map(next)); // every worker warmed up and ready
    const samples: number[] = [];
    let failed = 0;
    for (let round = 0; round < MIN_ROUNDS; round++) {
      const started = performance.now();
      const finished = children.map((child, i) => next(child, i) as Promise<Done>);
      for (const child of children) child.send('go');
      const results = await Promise.all(finished);
      const wall = performance.now() - started;
      samples.push((results.reduce((sum, r) => sum + r.signals, 0) / wall) * 1000);
      failed += results.reduce((sum, r) => sum + r.failed, 0);
    }
    stopping = true;
    for (const child of children) child.send('stop');
    await Promise.all(exited);
    return { samples, failed };
  }

  const one = await runProcesses(1);
  const four = await runProcesses(4);
  const [sequential, parallel] = trips;
  console.log(
    `\n## Runner with PostgresCheckpointStore + PostgresSessionLock: user_message, ${SESSIONS_PER_PROCESS} sessions per process, FSM + trivial engine, on ${machine}\n`,
  );
  if (one.failed + four.failed > 0) console.log(`${one.failed + four.failed} signals failed`);
  console.log(`Machine: ${machine}; no target is set for these figures.`);
  figure({
    workload: 'store-postgres: save + load, 2 KB checkpoint',
    name: 'round trips per second, one at a time',
    unit: '/s',
    samples: perSecond(sequential!),
  });
  figure({
    workload: 'store-postgres: save + load, 2 KB checkpoint',
    name: `round trips per second, ${PARALLEL} in flight`,
    unit: '/s',
    samples: perSecond(parallel!),
  });
  figure({
    workload: `store-postgres: runner + lock, ${SESSIONS_PER_PROCESS} sessions per process`,
    name: 'runner signals per second, 1 process',
    unit: '/s',
    samples: one.samples,
  });
  figure({
    workload: `store-postgres: runner + lock, ${SESSIONS_PER_PROCESS} sessions per process`,
    name: 'runner signals per second, 4 processes in aggregate',
    unit: '/s',
    samples: four.samples,
    against: `1 process ${Math.round(median(one.samples)).toLocaleString('en-US')}/s`,
  });
} finally {
  // Each store table has its history table `<table>_history` beside it, whose rows reference
  // the table's: both go in one statement.
  for (const table of tables) await admin.query(`DROP TABLE IF EXISTS "${table}_history", "${table}"`);
  await admin.end();
}
