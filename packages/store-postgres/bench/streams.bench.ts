// Streaming a turn across processes through the PostgreSQL inbox's event channel (inbox.md
// "Streams from any worker"), on loopback: a worker Runner applies a turn whose engine emits
// DELTAS text deltas, one every PACE_MS (a fast model), and a producer Runner (`worker: false`,
// pools of its own, so every delta crosses the server as a row and a NOTIFY) reads them with
// `runner.stream`. Per delta: the time from the engine's `emitText` to the producer's loop seeing
// it — p50 and p99 of each round's turn (target p99 ≤ 5 ms) — next to the same turn streamed in
// process (no inbox), and the same figures with the deltas emitted all at once (a burst: what the
// publisher's batching buys). Printed with the load average; never asserted.
// Each figure also with an AsyncLocalStorage active (`…@als`, decisions-wave3 §6), the two modes
// alternating turn by turn (an `@als` turn reads on sessions of its own, so both modes see the same
// histories): the reader's loop runs inside `als.run(store, …)`, as a request handler under a
// tracing context manager, and so does the engine's turn on the worker. The worker shares this
// process, so its own loops (its connections made before, with no store) run with the storage's
// promise hooks on too during an `@als` turn, which is what an active storage costs them (Node 20);
// the paced p99 has the same target in both modes.
// Needs the server at DATABASE_URL or postgres://postgres@127.0.0.1:5432/test; skips without one.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import pg from 'pg';
import { createRunner, type EngineFn, type Runner } from 'signalyard';
import { MIN_ROUNDS, figure, median } from '../../../scripts/bench/harness.mjs';
import { ALS, inAls, leaveAls } from '../../../scripts/bench/modes.mjs';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DELTAS = 200;
const PACE_MS = 2;

const admin = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5000 });
admin.on('error', () => undefined);
try {
  await admin.query('SELECT 1');
} catch (error) {
  console.log(`\n## store-postgres streams: SKIPPED — no PostgreSQL server at ${url} (${String(error)})`);
  await admin.end();
  process.exit(0);
}

/** When each delta of the turn in flight was emitted (performance.now()), by index. */
let emitted: number[] = [];
let paced = true;
/** Whether the turn in flight is an `@als` one: the engine's turn then runs inside the storage too. */
let alsTurn = false;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const turn: EngineFn = async (ctx) => {
  emitted = [];
  for (let i = 0; i < DELTAS; i++) {
    if (paced) await sleep(PACE_MS);
    emitted.push(performance.now());
    ctx.emitText(`t${String(i)} `);
  }
  return { messages: [{ role: 'assistant', content: 'done' }] };
};
const engine: EngineFn = (ctx) => (alsTurn ? inAls(() => turn(ctx)) : turn(ctx));

/** One streamed turn: each delta's latency (ms) from emit to the reader's loop. */
async function turnLatencies(runner: Runner, n: number, mode: string): Promise<number[]> {
  const latencies: number[] = [];
  let i = 0;
  for await (const event of runner.stream({
    channel: 'bench',
    text: `turn ${String(n)}`,
    peer: { kind: 'dm', id: `${mode === ALS ? 'a' : 's'}${String(n)}` },
  })) {
    if (event.type !== 'text_delta') continue;
    latencies.push(performance.now() - (emitted[i] as number));
    i++;
  }
  if (latencies.length !== DELTAS)
    throw new Error(`expected ${String(DELTAS)} deltas, got ${String(latencies.length)}`);
  return latencies;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

interface Latency {
  p50: number[];
  p99: number[];
}
const MODES = ['', ALS] as const;

/** One turn in `mode` ('' or '@als': its reader's loop and engine inside the AsyncLocalStorage). */
async function turnIn(mode: string, runner: Runner, n: number): Promise<number[]> {
  if (mode !== ALS) return turnLatencies(runner, n, mode);
  alsTurn = true;
  try {
    return await inAls(() => turnLatencies(runner, n, mode));
  } finally {
    alsTurn = false;
    leaveAls();
  }
}

/** Rounds of one turn per mode each, the modes alternating: per mode and round, p50 and p99 in ns. */
async function rounds(runner: Runner): Promise<Record<string, Latency>> {
  for (const mode of MODES) await turnIn(mode, runner, -1); // warm-up
  const byMode: Record<string, Latency> = { '': { p50: [], p99: [] }, [ALS]: { p50: [], p99: [] } };
  for (let round = 0; round < MIN_ROUNDS; round++) {
    for (const mode of MODES) {
      const latencies = await turnIn(mode, runner, round);
      const into = byMode[mode] as Latency;
      into.p50.push(percentile(latencies, 50) * 1e6);
      into.p99.push(percentile(latencies, 99) * 1e6);
    }
  }
  return byMode;
}

const inboxTable = `bench_streams_inbox_${randomBytes(4).toString('hex')}`;
const storeTable = `bench_streams_store_${randomBytes(4).toString('hex')}`;
const closers: (() => Promise<unknown>)[] = [];
try {
  const setupInbox = new PostgresInbox({ connectionString: url, table: inboxTable, maxConnections: 1 });
  const setupStore = new PostgresCheckpointStore({ connectionString: url, table: storeTable, maxConnections: 1 });
  await setupInbox.migrate();
  await setupStore.migrate();
  await setupInbox.close();
  await setupStore.close();
  const runnerOn = (worker: boolean): Runner => {
    const inbox = new PostgresInbox({ connectionString: url, table: inboxTable, maxConnections: 4, pollMs: 200 });
    const store = new PostgresCheckpointStore({ connectionString: url, table: storeTable, maxConnections: 2 });
    const runner = createRunner({
      agents: [{ id: 'main', engine }],
      inbox,
      store,
      worker: worker ? { pollMs: 200 } : false,
    });
    closers.push(
      () => runner.close(),
      () => inbox.close(),
      () => store.close(),
    );
    return runner;
  };
  runnerOn(true);
  const producer = runnerOn(false);
  const local = createRunner({ agents: [{ id: 'main', engine }] });
  closers.push(() => local.close());

  const measured: Record<string, Latency> = {};
  for (const mode of ['paced', 'burst'] as const) {
    paced = mode === 'paced';
    for (const [kind, runner] of [
      ['local', local],
      ['inbox', producer],
    ] as const) {
      const byMode = await rounds(runner);
      for (const als of MODES) measured[`${mode} ${kind}${als}`] = byMode[als] as Latency;
    }
  }
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const workload = `store-postgres: a turn of ${String(DELTAS)} deltas streamed worker → producer through the PostgreSQL inbox (loopback, load ${load})`;
  const ms = (ns: number[]): string => `${(median(ns) / 1e6).toFixed(2)} ms`;
  console.log(`\n## ${workload}\n`);
  for (const [name, m] of Object.entries(measured)) {
    console.log(`${name.padEnd(16)} p50 ${ms(m.p50)}, p99 ${ms(m.p99)} (medians of ${String(m.p50.length)} turns)`);
  }
  for (const als of MODES) {
    for (const mode of ['paced', 'burst'] as const) {
      const inbox = measured[`${mode} inbox${als}`] as Latency;
      const local = measured[`${mode} local${als}`] as Latency;
      const how = mode === 'paced' ? `one delta every ${String(PACE_MS)} ms` : 'all deltas at once';
      figure({
        workload,
        name: `delta latency p50, ${how}${als}`,
        unit: 'ns',
        samples: inbox.p50,
        against: `in-process stream${als} ${ms(local.p50)}`,
      });
      figure({
        workload,
        name: `delta latency p99, ${how}${als}`,
        unit: 'ns',
        samples: inbox.p99,
        ...(mode === 'paced' && { target: { atMost: 5_000_000 } }),
        against: `in-process stream${als} ${ms(local.p99)}`,
      });
    }
  }
} finally {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await admin
    .query(
      `SELECT string_agg(format('DROP TABLE IF EXISTS %I CASCADE', tablename), '; ') AS sql FROM pg_tables WHERE tablename LIKE $1 OR tablename LIKE $2`,
      [`${inboxTable}%`, `${storeTable}%`],
    )
    .then(async (r) => {
      const sql = (r.rows[0] as { sql: string | null } | undefined)?.sql;
      if (sql !== null && sql !== undefined) await admin.query(sql);
    })
    .catch(() => undefined);
  await admin.end();
}
