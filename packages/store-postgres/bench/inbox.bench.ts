// The PostgreSQL inbox (issue 41's figures), side by side in one run, on loopback:
// - settled signals per second, 2 workers: 2 worker PROCESSES (bench/inbox-runner.ts, a Runner
//   with PostgresCheckpointStore and PostgresInbox, a trivial engine, history capped at 20) settle
//   what a producer runner in this process (`worker: false`) accepts: SIGNALS user messages over
//   SESSIONS sessions, 64 accepts in flight, from the first accept until the inbox is empty
//   (target >= 3,000/s) — next to the same runner on PostgreSQL WITHOUT an inbox, 2 processes each
//   dispatching half the signals over half the sessions, 32 in flight each (target: the inbox
//   >= 40 % of it). The two alternate round by round.
// - `runner.accept` latency, one at a time over SESSIONS sessions (no worker running): p50 and
//   p99 of each round (targets 2 ms and 20 ms).
// Both also with an AsyncLocalStorage active (`…@als`, decisions-wave3 §6): the throughput rounds
// again with worker and runner processes that run everything inside one, the producer's accepts
// inside one too (after the plain mode's rounds, with fresh processes); the latency rounds
// alternate the two modes.
// - recovery after kill -9 with leaseMs 2,000: a worker process holds a session's lease in the
//   middle of a turn and is killed with SIGKILL; from the kill until a worker in this process
//   (pollMs 100, already running) has settled the entry (target <= 3,000 ms: leaseMs + 1 s).
// Prints where the time goes: the workers' round trips to the server per settled entry, by
// statement, with their time as the worker saw it (counted client side); the CPU per signal of
// each process kind and of the server processes serving each side (the server's own timings:
// /proc/<pid>/stat of the backends, found by application_name), split into accepting and settling,
// with the ratio that CPU allows on the same cores; and how idle the machine was during the rounds
// (a CPU-bound round is bounded by that CPU). Needs the server at DATABASE_URL or
// postgres://postgres@127.0.0.1:5432/test; without one it says so and skips.
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal, type ChatMessage } from '@signalyard/core';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import { Pool } from 'pg';
import { createRunner, type Runner } from 'signalyard';
import { MIN_ROUNDS, figure, median } from '../../../scripts/bench/harness.mjs';
import { ALS, inAls, leaveAls } from '../../../scripts/bench/modes.mjs';
import { CostMeter, minus, newSpent, printCosts, printTrips, tripsOf, type Child } from './inbox-bench-costs.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const machine = `${cpus()[0]?.model ?? 'unknown CPU'} (${String(cpus().length)} cores), Node ${process.version}`;
const SIGNALS = 3000;
const SESSIONS = 100;
const WINDOW = 64;
const LATENCY_ACCEPTS = 500;
const script = fileURLToPath(new URL('./inbox-runner.ts', import.meta.url));

const admin = new Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5000 });
admin.on('error', () => undefined);
try {
  await admin.query('SELECT 1');
} catch (error) {
  console.log(`\n## store-postgres inbox: SKIPPED — no PostgreSQL server at ${url} (${String(error)})`);
  await admin.end();
  process.exit(0);
}

const tag = `${String(process.pid)}_${randomBytes(3).toString('hex')}`;
const meter = new CostMeter(admin, tag);

/** `url` with the `application_name` that {@link serverCpu} finds the role's server processes by. */
function named(role: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', `sybench_${tag}_${role}`);
  return u.toString();
}
const storeTable = `sy_bench_ibx_store_${tag}`;
const inboxTable = `sy_bench_ibx_${tag}`;
const reply: readonly ChatMessage[] = [{ role: 'assistant', content: 'ok' }];
const agents = [{ id: 'main', engine: () => Promise.resolve({ messages: reply }) }];
const message = signal(SignalKind.UserMessage, 'hello');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a runner process of inbox-runner.ts; with `als`, it runs everything with an AsyncLocalStorage active. */
function child(mode: string, label: string, sessions = 0, count = 0, window = 0, als = false): Child {
  const proc = spawn(
    process.execPath,
    [
      // INBOX_BENCH_PROFILE=<dir>: each worker process writes a V8 CPU profile there
      // (summarise with scripts/bench/profile-summary.mjs).
      ...(mode === 'worker' && process.env.INBOX_BENCH_PROFILE !== undefined
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.INBOX_BENCH_PROFILE}`]
        : []),
      '--import',
      'tsx',
      script,
      named(label.replace(/\d+$/, '')),
      storeTable,
      inboxTable,
      mode,
      label,
      String(sessions),
      String(count),
      String(window),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: als ? { ...process.env, BENCH_ALS: '1' } : process.env },
  );
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    process: proc,
    next: (type) =>
      new Promise((resolve, reject) => {
        const on = (m: unknown): void => {
          if ((m as { type?: string }).type !== type) return;
          proc.off('message', on);
          resolve(m as Record<string, unknown>);
        };
        proc.on('message', on);
        void exited.then(() => reject(new Error(`a bench runner (${mode}) exited before ${type}`)));
      }),
    stop: async () => {
      if (proc.connected) proc.send('stop');
      await exited;
    },
  };
}

/** A producer runner (`worker: false`) or a worker in this process, with its own inbox and store. */
function local(worker: false | { leaseMs: number; pollMs: number }): {
  runner: Runner;
  inbox: PostgresInbox;
  close: () => Promise<void>;
} {
  const store = new PostgresCheckpointStore({
    connectionString: named('producer'),
    table: storeTable,
    maxConnections: 4,
  });
  const inbox = new PostgresInbox({
    connectionString: named('producer'),
    table: inboxTable,
    maxConnections: 8,
    pollMs: 100,
    maxPendingPerSession: 100_000,
  });
  const runner = createRunner({ agents, store, inbox, worker, maxHistoryMessages: 20 });
  return {
    runner,
    inbox,
    close: async () => {
      await runner.close();
      await inbox.close();
      await store.close();
    },
  };
}

/** p-th percentile (0–1). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

const producer = local(false);
const keys = Array.from({ length: SESSIONS }, (_, i) => `agent:main:inbox-${String(i)}`);

/** Accepts `count` signals, `WINDOW` in flight; resolves when the inbox is empty. Signals per second. */
async function inboxRound(count: number): Promise<{ rate: number; acceptMs: number }> {
  const started = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await producer.runner.accept(keys[next++ % SESSIONS] as string, message);
  };
  await Promise.all(Array.from({ length: WINDOW }, lane));
  const acceptMs = performance.now() - started;
  while ((await producer.inbox.pending({ limit: 1 })).length > 0) await sleep(5);
  return { rate: count / ((performance.now() - started) / 1000), acceptMs };
}

/** Both plain runners dispatch their half at once: signals per second over both. */
async function plainRound(plain: readonly Child[]): Promise<number> {
  const started = performance.now();
  const done = plain.map((c) => c.next('done'));
  for (const c of plain) c.process.send('go');
  const results = await Promise.all(done);
  const failed = results.reduce((n, r) => n + Number(r.failed), 0);
  if (failed > 0) throw new Error(`${String(failed)} plain dispatches did not complete`);
  return SIGNALS / ((performance.now() - started) / 1000);
}

/** One round of `accept` latency, one at a time, no worker running: [p50, p99] in ns. */
async function latencyRound(): Promise<[number, number]> {
  const times: number[] = [];
  for (let i = 0; i < LATENCY_ACCEPTS; i++) {
    const start = process.hrtime.bigint();
    await producer.runner.accept(`agent:main:latency-${String(i % SESSIONS)}`, message);
    times.push(Number(process.hrtime.bigint() - start));
  }
  return [percentile(times, 0.5), percentile(times, 0.99)];
}

/**
 * Where an accept's time goes, one at a time: the floor of any statement here (`SELECT 1`, a
 * round trip through the pool), the accept function's own execution on the server (EXPLAIN
 * ANALYZE, commit excluded), and a bare commit that writes (a one-row UPDATE: its WAL flush).
 * Medians in ms.
 */
async function acceptCosts(): Promise<{ roundTrip: number; execute: number; commit: number }> {
  const roundTrips: number[] = [];
  const executes: number[] = [];
  const commits: number[] = [];
  await admin.query(`CREATE TABLE IF NOT EXISTS "${inboxTable}_bench_commit" (id int PRIMARY KEY, n bigint)`);
  await admin.query(`INSERT INTO "${inboxTable}_bench_commit" VALUES (1, 0) ON CONFLICT DO NOTHING`);
  for (let i = 0; i < 200; i++) {
    let start = performance.now();
    await admin.query('SELECT 1');
    roundTrips.push(performance.now() - start);
    const plan = await admin.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, TIMING OFF) SELECT * FROM "${inboxTable}_accept"($1, $2, $3, NULL, 'user_message', '{}', NULL, 100000, 10000000, 600000)`,
      [`cost-${String(i)}-${tag}`, randomUUID(), `agent:main:cost-${String(i % SESSIONS)}`],
    );
    const line = plan.rows.map((r) => r['QUERY PLAN']).find((l) => l.startsWith('Execution Time'));
    executes.push(Number(/([\d.]+) ms/.exec(line ?? '')?.[1] ?? Number.NaN));
    start = performance.now();
    await admin.query(`UPDATE "${inboxTable}_bench_commit" SET n = n + 1 WHERE id = 1`);
    commits.push(performance.now() - start);
  }
  return { roundTrip: median(roundTrips), execute: median(executes), commit: median(commits) };
}

/** One recovery round: ms from the kill until a rescuer (started here once the turn is held) settled the entry. */
async function recoveryRound(round: number): Promise<number> {
  const stuck = child('stuck', 'stuck');
  await stuck.next('ready');
  const turn = stuck.next('turn');
  const receipt = await producer.runner.accept(`agent:main:recovery-${String(round)}`, message);
  await turn;
  // Started after the stuck worker took the lease (else it might take the entry first), before the kill.
  const rescuer = local({ leaseMs: 2000, pollMs: 100 });
  try {
    await rescuer.runner.start();
    await rescuer.inbox.listening();
    stuck.process.kill('SIGKILL');
    const killed = performance.now();
    const outcome = await producer.runner.outcome(receipt.receiptId, { timeoutMs: 60_000 });
    const ms = performance.now() - killed;
    if (outcome.status !== 'completed') throw new Error(`the recovered entry ended ${outcome.status}`);
    return ms;
  } finally {
    await stuck.stop();
    await rescuer.close();
  }
}

/** What one mode's side-by-side rounds measured. */
interface Throughput {
  readonly inboxRates: number[];
  readonly plainRates: number[];
  readonly acceptMs: number[];
  readonly load: number[];
}

/**
 * The side-by-side rounds in one mode: 2 worker processes and 2 runner processes without an
 * inbox, started for it — with `als`, processes that run everything with an AsyncLocalStorage
 * active, and the producer's accepts run inside one (decisions-wave3 §6) — a warm-up round of
 * each (every inbox session saved, the processes' hot code compiled: a shorter warm-up left the
 * first measured round of both kinds a fifth slower), then MIN_ROUNDS of each alternately.
 * Prints where the time went.
 */
async function throughput(als: boolean): Promise<Throughput> {
  const a = als ? 'a' : '';
  const workers = [0, 1].map((i) => child('worker', `w${a}${String(i)}`, 0, 0, 0, als));
  const plain = [0, 1].map((i) => child('plain', `plain${a}${String(i)}`, SESSIONS / 2, SIGNALS / 2, WINDOW / 2, als));
  const inMode = <T>(fn: () => Promise<T>): Promise<T> => (als ? inAls(fn).finally(leaveAls) : fn());
  try {
    const ready = await Promise.all([...workers, ...plain].map((c) => c.next('ready')));
    if (ready.some((r) => r.als !== als))
      throw new Error(`a bench runner did not start ${als ? 'with' : 'without'} its AsyncLocalStorage`);
    await inMode(() => inboxRound(SIGNALS));
    await plainRound(plain);
    const run: Throughput = { inboxRates: [], plainRates: [], acceptMs: [], load: [] };
    const spent = newSpent();
    const before = await tripsOf(workers);
    for (let round = 0; round < MIN_ROUNDS; round++) {
      run.load.push(loadavg()[0] ?? 0);
      const roles = [`w${a}`, 'producer', `w${a}_store`];
      const r = await meter.costed(spent, 'inbox', workers, roles, () => inMode(() => inboxRound(SIGNALS)));
      run.inboxRates.push(r.rate);
      run.acceptMs.push(r.acceptMs);
      const plainRoles = [`plain${a}`, `plain${a}_store`];
      run.plainRates.push(await meter.costed(spent, 'plain', plain, plainRoles, () => plainRound(plain)));
    }
    const trips = minus(await tripsOf(workers), before);
    const rates = (list: number[]): string => list.map((r) => r.toFixed(0)).join(', ');
    console.log(`settled/s${als ? ALS : ''}: inbox ${rates(run.inboxRates)}; plain ${rates(run.plainRates)}`);
    printTrips(trips, SIGNALS * MIN_ROUNDS);
    printCosts(spent, SIGNALS * MIN_ROUNDS);
    return run;
  } finally {
    await Promise.all([...workers, ...plain].map((c) => c.stop()));
  }
}

try {
  const migrator = new PostgresCheckpointStore({ pool: admin, table: storeTable });
  await migrator.migrate();
  await producer.inbox.migrate();
  await producer.runner.start();

  // ---------------------------------------------------------------- settled/s, side by side
  const runs = { '': await throughput(false), [ALS]: await throughput(true) };

  // ---------------------------------------------------------------- accept latency
  const latency = {
    '': { p50: [] as number[], p99: [] as number[] },
    [ALS]: { p50: [] as number[], p99: [] as number[] },
  };
  await latencyRound(); // warm up
  await inAls(latencyRound).finally(leaveAls);
  for (let round = 0; round < MIN_ROUNDS; round++)
    for (const [mode, l] of Object.entries(latency)) {
      const [a, b] = mode === ALS ? await inAls(latencyRound).finally(leaveAls) : await latencyRound();
      l.p50.push(a);
      l.p99.push(b);
    }
  const { p50, p99 } = latency[''];

  const costs = await acceptCosts();
  console.log(
    `accept p50 ${(median(p50) / 1e6).toFixed(2)} ms, p99 ${(median(p99) / 1e6).toFixed(2)} ms; where it goes (medians): ` +
      `a SELECT 1 round trip ${costs.roundTrip.toFixed(2)} ms, the accept function executing on the server ` +
      `${costs.execute.toFixed(2)} ms, a one-row UPDATE with its commit ${costs.commit.toFixed(2)} ms`,
  );

  // ---------------------------------------------------------------- recovery after kill -9
  const recoveries: number[] = [];
  for (let round = 0; round < MIN_ROUNDS; round++) recoveries.push(await recoveryRound(round));

  console.log(`\n## PostgreSQL inbox on ${machine}, PostgreSQL on loopback`);
  const workload = `store-postgres inbox: ${String(SIGNALS)} signals over ${String(SESSIONS)} sessions`;
  for (const [mode, { inboxRates, plainRates, acceptMs, load }] of Object.entries(runs)) {
    console.log(
      (mode === ALS ? 'with an AsyncLocalStorage active in every process (@als): ' : '') +
        `load average (1 min) at the throughput rounds: ${load.map((l) => l.toFixed(1)).join(', ')}; ` +
        `${String(SIGNALS)} signals over ${String(SESSIONS)} sessions, ${String(WINDOW)} accepts in flight`,
    );
    console.log(
      `  inbox, 2 worker processes: ${inboxRates.map((r) => r.toFixed(0)).join(', ')} settled/s; ` +
        `of which the accepts took ${acceptMs.map((ms) => ms.toFixed(0)).join(', ')} ms (the workers settle meanwhile)`,
    );
    console.log(`  no inbox, 2 runner processes: ${plainRates.map((r) => r.toFixed(0)).join(', ')} signals/s`);
  }
  for (const [mode, { inboxRates, plainRates }] of Object.entries(runs)) {
    figure({
      workload,
      name: `settled signals per second, 2 worker processes${mode}`,
      unit: '/s',
      samples: inboxRates,
      target: { atLeast: 3000 },
      against: `no inbox, 2 processes ${Math.round(median(plainRates)).toLocaleString('en-US')}/s`,
    });
    figure({
      workload,
      name: `settled/s with the inbox / without (same runner, 2 processes)${mode}`,
      unit: 'x',
      samples: inboxRates.map((r, i) => r / (plainRates[i] ?? r)),
      target: { atLeast: 0.4 },
    });
  }
  for (const [mode, l] of Object.entries(latency)) {
    figure({
      workload: `store-postgres inbox: runner.accept one at a time, ${String(SESSIONS)} sessions`,
      name: `accept p50${mode}`,
      unit: 'ns',
      samples: l.p50,
      target: { atMost: 2_000_000 },
    });
    figure({
      workload: `store-postgres inbox: runner.accept one at a time, ${String(SESSIONS)} sessions`,
      name: `accept p99${mode}`,
      unit: 'ns',
      samples: l.p99,
      target: { atMost: 20_000_000 },
    });
  }
  figure({
    workload: 'store-postgres inbox: recovery after kill -9, leaseMs 2,000, pollMs 100',
    name: 'kill → entry settled by another worker',
    unit: 'ns',
    samples: recoveries.map((ms) => ms * 1e6),
    target: { atMost: 3000 * 1e6 },
  });
} finally {
  await producer.close().catch(() => undefined);
  await admin
    .query(
      `SELECT string_agg(format('DROP TABLE IF EXISTS %I CASCADE', tablename), '; ') AS sql FROM pg_tables WHERE tablename LIKE $1`,
      [`sy_bench_ibx_%${tag}%`],
    )
    .then(async (r) => {
      const sql = (r.rows[0] as { sql: string | null } | undefined)?.sql;
      if (sql) await admin.query(sql);
    });
  await admin.query(`DROP SEQUENCE IF EXISTS "${inboxTable}_order"`).catch(() => undefined);
  await admin
    .query(`DROP FUNCTION IF EXISTS "${inboxTable}_accept", "${inboxTable}_accept_many"`)
    .catch(() => undefined);
  await admin.end();
}
