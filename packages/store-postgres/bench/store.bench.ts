// PostgreSQL store throughput on loopback: save+load round trips per second (one after another,
// and 16 in flight), and Runner dispatch throughput with PostgresCheckpointStore and
// PostgresSessionLock — 1 runner process, then 4 processes in aggregate (each with a pool of at
// most 5 connections plus its lock connection, each over its own 250 sessions, user_message
// round robin, an FSM strategy, a trivial engine, history capped at 20), each measured in
// several rounds, printed with the machine they were measured on; and the cost of history: a
// save with keepVersions 20 against one with keepVersions 0 (target <= 1.5x), and history() of a
// session with 20 kept versions (target <= 1 ms). Needs the server at DATABASE_URL or
// postgres://postgres@127.0.0.1:5432/test; without one it says so and skips.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { Pool } from 'pg';
import {
  MIN_ROUNDS,
  described,
  figure,
  measure,
  median,
  perSecond,
  printTable,
  ratio,
} from '../../../scripts/bench/harness.mjs';

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

  const bare = new PostgresCheckpointStore({
    connectionString: url,
    table: freshTable('bare'),
    keepVersions: 0,
    maxConnections: 2,
  });
  const kept = new PostgresCheckpointStore({
    connectionString: url,
    table: freshTable('kept'),
    keepVersions: 20,
    maxConnections: 2,
  });
  await bare.migrate();
  await kept.migrate();
  /** Saves only (the Runner's write path), one at a time, round robin over KEYS keys. */
  const saves = (target: PostgresCheckpointStore): (() => Promise<void>) => {
    const saved = new Array<number>(KEYS).fill(0);
    return async () => {
      for (let i = 0; i < SEQUENTIAL; i++) {
        const k = i % KEYS;
        saved[k] = await target.save(`agent:main:saves-${k}`, checkpoint, saved[k]!);
      }
    };
  };
  for (let v = 0; v < 21; v++) await kept.save('agent:main:walked', checkpoint, v);
  const HISTORY_CALLS = 20;
  const history = await measure(
    [
      { name: 'save, keepVersions 0 (current only)', batch: SEQUENTIAL, fn: saves(bare) },
      { name: 'save, keepVersions 20', batch: SEQUENTIAL, fn: saves(kept) },
      {
        name: 'history() of 20 versions + current',
        batch: HISTORY_CALLS,
        fn: async () => {
          for (let i = 0; i < HISTORY_CALLS; i++) {
            let n = 0;
            for await (const _version of kept.history('agent:main:walked')) n++;
            if (n !== 21) throw new Error(`history listed ${n} versions, expected 21`);
          }
        },
      },
    ],
    { time: 1000, warmupTime: 300 },
  );
  await bare.close();
  await kept.close();
  printTable(`PostgresCheckpointStore: the cost of keeping history (per call) on ${machine}`, history);
  const [saveBare, saveKept, listHistory] = history;
  figure({
    workload: 'store-postgres: save with history (keepVersions 20), 2 KB checkpoint',
    name: 'save with history / save without',
    unit: 'x',
    samples: ratio(saveKept!, saveBare!),
    target: { atMost: 1.5 },
    against: described(saveBare!, 'save with keepVersions 0'),
  });
  figure({
    workload: 'store-postgres: history() of a session with 20 kept versions',
    name: 'history() listing 21 versions',
    unit: 'ns',
    samples: listHistory!.samples,
    target: { atMost: 1_000_000 },
  });

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
