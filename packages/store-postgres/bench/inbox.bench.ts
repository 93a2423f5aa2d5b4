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
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal, type ChatMessage } from '@signalyard/core';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import { Pool } from 'pg';
import { createRunner, type Runner } from 'signalyard';
import { MIN_ROUNDS, figure, median } from '../../../scripts/bench/harness.mjs';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const machine = `${cpus()[0]?.model ?? 'unknown CPU'} (${String(cpus().length)} cores), Node ${process.version}`;
const SIGNALS = 3000;
const SESSIONS = 100;
const WINDOW = 64;
const LATENCY_ACCEPTS = 500;
const script = fileURLToPath(new URL('./inbox-runner.ts', import.meta.url));
/** Ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

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

/** A runner process of bench/inbox-runner.ts, and its messages. */
interface Child {
  readonly process: ChildProcess;
  next(type: string): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

function child(mode: string, label: string, sessions = 0, count = 0, window = 0): Child {
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
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
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

type Trips = Record<string, { calls: number; ms: number }>;

/**
 * Where the inbox's CPU goes, accepting against settling, and the ratio it allows: the rounds are
 * CPU-bound (the workers, the producer and the server share the machine's cores), so the rate with
 * the inbox over the rate without is at most the CPU per signal without over the CPU per signal
 * with — and accepting alone (the producer and its server processes) puts a ceiling on it even if
 * settling cost no more than the turn without an inbox.
 */
function printBound(per: (ms: number) => string): void {
  const accepting = spent.inboxProducer + spent.inboxAcceptServer;
  const settling = spent.inboxNode + spent.inboxServer - spent.inboxAcceptServer;
  const plainMs = spent.plainNode + spent.plainServer;
  const ratio = (ms: number): string => (plainMs / ms).toFixed(2);
  console.log(
    `  accepting ${per(accepting)} µs (producer ${per(spent.inboxProducer)} + its server processes ${per(spent.inboxAcceptServer)}), ` +
      `settling ${per(settling)} µs (workers ${per(spent.inboxNode)} + the server processes of their inbox statements ` +
      `${per(spent.inboxServer - spent.inboxAcceptServer - spent.inboxSaveServer)} and of their saves ${per(spent.inboxSaveServer)}), ` +
      `a signal without the inbox ${per(plainMs)} µs in all: ` +
      `with the same cores, the ratio is at most ${ratio(accepting + settling)}x as spent, ` +
      `and ${ratio(accepting + plainMs)}x if settling cost only the turn without the inbox`,
  );
  const idle = ({ idle, all }: { idle: number; all: number }): string =>
    all > 0 ? ((100 * idle) / all).toFixed(0) : '?';
  console.log(
    `  the machine's cores idle during the rounds: ${idle(spent.inboxMachine)} % with the inbox, ${idle(spent.plainMachine)} % without`,
  );
}

/** The machine's CPU ticks so far (every core): idle (with I/O wait) and in all, from /proc/stat. */
function machineTicks(): { idle: number; all: number } {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    return { idle: (fields[3] ?? 0) + (fields[4] ?? 0), all: fields.reduce((n, t) => n + t, 0) };
  } catch {
    return { idle: 0, all: 0 }; // not Linux
  }
}

/** CPU ms so far of the server processes serving `role` (by application_name), by pid. */
async function serverCpu(role: string): Promise<Map<number, number>> {
  const rows = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
    `sybench_${tag}_${role}`,
  ]);
  const cpu = new Map<number, number>();
  for (const { pid } of rows.rows) {
    try {
      const fields =
        readFileSync(`/proc/${String(pid)}/stat`, 'utf8')
          .split(') ')[1]
          ?.split(' ') ?? [];
      cpu.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS);
    } catch {
      // gone, or the server is not on this machine
    }
  }
  return cpu;
}

/** CPU ms the server processes of `role` spent between two {@link serverCpu} readings (new processes: all of theirs). */
function serverCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}

/** CPU ms (and event-loop busy ms) the child processes spent so far, summed. */
async function childCpu(children: readonly Child[]): Promise<{ cpu: number; busy: number; idle: number }> {
  const replies = await Promise.all(
    children.map((w) => {
      const reply = w.next('trips');
      w.process.send('trips');
      return reply;
    }),
  );
  let cpu = 0;
  let busy = 0;
  let idle = 0;
  for (const r of replies) {
    cpu += r.cpuMs as number;
    const elu = r.elu as { active: number; idle: number };
    busy += elu.active;
    idle += elu.idle;
  }
  return { cpu, busy, idle };
}

/** CPU per signal over the measured rounds, µs: the runners' processes and the server's processes serving them. */
const spent = {
  inboxNode: 0,
  inboxProducer: 0,
  inboxServer: 0,
  /** Of `inboxServer`: the server processes serving the producer's accepts. */
  inboxAcceptServer: 0,
  /** Of `inboxServer`: the server processes serving the workers' checkpoint store (their saves and loads). */
  inboxSaveServer: 0,
  inboxBusy: 0,
  inboxIdle: 0,
  plainNode: 0,
  plainServer: 0,
  /** The machine's idle ticks and all its ticks during the inbox rounds, and during the rounds without. */
  inboxMachine: { idle: 0, all: 0 },
  plainMachine: { idle: 0, all: 0 },
};

/** Runs `round` and adds the CPU it cost to `spent`. */
async function costed<T>(kind: 'inbox' | 'plain', children: readonly Child[], round: () => Promise<T>): Promise<T> {
  // the workers' inbox connections, the producer's, the workers' store connections (inbox-runner.ts)
  const roles = kind === 'inbox' ? ['w', 'producer', 'w_store'] : ['plain', 'plain_store'];
  const server0 = await Promise.all(roles.map(serverCpu));
  const node0 = await childCpu(children);
  const self0 = process.cpuUsage();
  const ticks0 = machineTicks();
  const result = await round();
  const ticks = machineTicks();
  const self = process.cpuUsage(self0);
  const machine = kind === 'inbox' ? spent.inboxMachine : spent.plainMachine;
  machine.idle += ticks.idle - ticks0.idle;
  machine.all += ticks.all - ticks0.all;
  const node = await childCpu(children);
  const server = await Promise.all(roles.map(serverCpu));
  const byRole = server.map((after, i) => serverCpuSpent(server0[i] as Map<number, number>, after));
  const serverMs = byRole.reduce((n, ms) => n + ms, 0);
  if (kind === 'inbox') {
    spent.inboxAcceptServer += byRole[1] ?? 0;
    spent.inboxSaveServer += byRole[2] ?? 0;
    spent.inboxNode += node.cpu - node0.cpu;
    spent.inboxProducer += (self.user + self.system) / 1000;
    spent.inboxServer += serverMs;
    spent.inboxBusy += node.busy - node0.busy;
    spent.inboxIdle += node.idle - node0.idle;
  } else {
    spent.plainNode += node.cpu - node0.cpu;
    spent.plainServer += serverMs;
  }
  return result;
}

try {
  const migrator = new PostgresCheckpointStore({ pool: admin, table: storeTable });
  await migrator.migrate();
  await producer.inbox.migrate();
  await producer.runner.start();

  // ---------------------------------------------------------------- settled/s, side by side
  const workers = [child('worker', 'w0'), child('worker', 'w1')];
  const plain = [0, 1].map((i) => child('plain', `plain${String(i)}`, SESSIONS / 2, SIGNALS / 2, WINDOW / 2));
  await Promise.all([...workers, ...plain].map((c) => c.next('ready')));
  // Warm up, one round of each: every inbox session saved, and the processes' hot code compiled
  // (a shorter warm-up left the first measured round of both kinds a fifth slower: still compiling).
  await inboxRound(SIGNALS);
  await plainRound(plain);
  const inboxRates: number[] = [];
  const plainRates: number[] = [];
  const acceptMs: number[] = [];
  const load: number[] = [];
  const before = await tripsOf(workers);
  for (let round = 0; round < MIN_ROUNDS; round++) {
    load.push(loadavg()[0] ?? 0);
    const r = await costed('inbox', workers, () => inboxRound(SIGNALS));
    inboxRates.push(r.rate);
    acceptMs.push(r.acceptMs);
    plainRates.push(await costed('plain', plain, () => plainRound(plain)));
  }
  const trips = minus(await tripsOf(workers), before);
  console.log(
    `settled/s: inbox ${inboxRates.map((r) => r.toFixed(0)).join(', ')}; plain ${plainRates.map((r) => r.toFixed(0)).join(', ')}`,
  );
  printTrips(trips, SIGNALS * MIN_ROUNDS);
  const per = (ms: number): string => ((ms / (SIGNALS * MIN_ROUNDS)) * 1000).toFixed(0);
  console.log(
    `  CPU per signal (µs): inbox — workers ${per(spent.inboxNode)} (event loop busy ${((100 * spent.inboxBusy) / (spent.inboxBusy + spent.inboxIdle)).toFixed(0)} %), ` +
      `producer process ${per(spent.inboxProducer)}, server processes ${per(spent.inboxServer)}; ` +
      `no inbox — runners ${per(spent.plainNode)}, server processes ${per(spent.plainServer)}`,
  );
  printBound(per);
  await Promise.all([...workers, ...plain].map((c) => c.stop()));

  // ---------------------------------------------------------------- accept latency
  const p50: number[] = [];
  const p99: number[] = [];
  await latencyRound(); // warm up
  for (let round = 0; round < MIN_ROUNDS; round++) {
    const [a, b] = await latencyRound();
    p50.push(a);
    p99.push(b);
  }

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
  console.log(
    `load average (1 min) at the throughput rounds: ${load.map((l) => l.toFixed(1)).join(', ')}; ` +
      `${String(SIGNALS)} signals over ${String(SESSIONS)} sessions, ${String(WINDOW)} accepts in flight`,
  );
  console.log(
    `  inbox, 2 worker processes: ${inboxRates.map((r) => r.toFixed(0)).join(', ')} settled/s; ` +
      `of which the accepts took ${acceptMs.map((ms) => ms.toFixed(0)).join(', ')} ms (the workers settle meanwhile)`,
  );
  console.log(`  no inbox, 2 runner processes: ${plainRates.map((r) => r.toFixed(0)).join(', ')} signals/s`);

  const workload = `store-postgres inbox: ${String(SIGNALS)} signals over ${String(SESSIONS)} sessions`;
  const plainMedian = median(plainRates);
  figure({
    workload,
    name: 'settled signals per second, 2 worker processes',
    unit: '/s',
    samples: inboxRates,
    target: { atLeast: 3000 },
    against: `no inbox, 2 processes ${Math.round(plainMedian).toLocaleString('en-US')}/s`,
  });
  figure({
    workload,
    name: 'settled/s with the inbox / without (same runner, 2 processes)',
    unit: 'x',
    samples: inboxRates.map((r, i) => r / (plainRates[i] ?? r)),
    target: { atLeast: 0.4 },
  });
  figure({
    workload: `store-postgres inbox: runner.accept one at a time, ${String(SESSIONS)} sessions`,
    name: 'accept p50',
    unit: 'ns',
    samples: p50,
    target: { atMost: 2_000_000 },
  });
  figure({
    workload: `store-postgres inbox: runner.accept one at a time, ${String(SESSIONS)} sessions`,
    name: 'accept p99',
    unit: 'ns',
    samples: p99,
    target: { atMost: 20_000_000 },
  });
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

/** Both workers' round trips so far, summed by statement. */
async function tripsOf(workers: readonly Child[]): Promise<Trips> {
  const replies = await Promise.all(
    workers.map((w) => {
      const reply = w.next('trips');
      w.process.send('trips');
      return reply;
    }),
  );
  const sum: Trips = {};
  for (const reply of replies)
    for (const [k, v] of Object.entries(reply.trips as Trips)) {
      const t = (sum[k] ??= { calls: 0, ms: 0 });
      t.calls += v.calls;
      t.ms += v.ms;
    }
  return sum;
}

function minus(after: Trips, before: Trips): Trips {
  return Object.fromEntries(
    Object.entries(after).map(([k, v]) => [
      k,
      { calls: v.calls - (before[k]?.calls ?? 0), ms: v.ms - (before[k]?.ms ?? 0) },
    ]),
  );
}

function printTrips(all: Trips, settled: number): void {
  console.log(
    "  where the time goes: the 2 workers' round trips per settled entry (client side, the measured rounds):",
  );
  const rows = Object.entries(all)
    .filter(([, t]) => t.calls > 0)
    .sort(([, a], [, b]) => b.ms - a.ms);
  for (const [label, t] of rows.slice(0, 14))
    console.log(
      `    ${(t.calls / settled).toFixed(2).padStart(6)} trips ${((t.ms / settled) * 1000).toFixed(0).padStart(7)} µs  ${label}`,
    );
  const calls = rows.reduce((n, [, t]) => n + t.calls, 0);
  console.log(`    in all ${(calls / settled).toFixed(2)} round trips per settled entry`);
}
