// The JetStream inbox beside the PostgreSQL inbox, in one run (inbox.md "Figures"):
// - `accept` latency: p50 and p99 of one accept at a time over 100 sessions (targets 2 ms, 20 ms);
// - accepted signals per second with 128 concurrent callers across the sessions (as a web tier's
//   requests arrive: each caller awaits its own accept; nothing is batched) while 2 worker
//   PROCESSES (bench/inbox-settler.ts) settle (acquire → read → beginDelivery → putOutcome → ack;
//   no engine, no checkpoint store); the settled rate beside it, then the workers' rate draining
//   the backlog once the callers stop; the ratio of the JetStream figures to PostgreSQL's;
// - the producer side alone (the workers paused): accepted per second, and what an accept costs
//   in CPU, the producer process's and the nats-server's (nearly load-independent: on a loaded
//   machine the rates measure the machine's spare time, these the code);
// - recovery after kill -9 (JetStream, PostgreSQL checkpoint store, leaseMs 2,000, pollMs 100): a
//   worker PROCESS (bench/recovery-worker.ts) holds a session's lease in the middle of a turn and
//   is killed with SIGKILL; from the kill until another worker (running already) settled the
//   entry. Target: leaseMs + 1 s.
// The latency and rate figures (all but recovery) also with an AsyncLocalStorage active
// (`…@als`, decisions-wave3 §6): each inbox is measured twice side by side, each mode over a
// stream (a table) of its own with a producer of its own in this process and 2 worker processes
// of its own — for @als, processes that run everything inside one (env BENCH_ALS=1) and the
// producer's accepts inside one too; round by round, the latency rounds of both modes, then the
// throughput rounds of both (so drift and the backlog's growth hit both alike).
// Starts its own `nats-server -js` (file storage, temporary directory); without the binary it
// says so and skips. Needs PostgreSQL at DATABASE_URL or postgres://postgres@127.0.0.1:5432/test
// for the comparison and the recovery figure (without it the JetStream rates are printed alone).
import { randomBytes } from 'node:crypto';
import type { Inbox } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresInbox } from '@signalyard/store-postgres';
import pg from 'pg';
import { MIN_ROUNDS, figure, median } from '../../../scripts/bench/harness.mjs';
import { ALS, inAls, leaveAls } from '../../../scripts/bench/modes.mjs';
import { Settlers, startServer, type Server } from './inbox-bench-processes.js';
import { recoveryRound } from './recovery.js';

const SESSIONS = 100;
const LATENCY_ACCEPTS = 1000;
const CALLERS = 128;
const THROUGHPUT_MS = 2000;
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const text = (payload: string) => ({ kind: 'user_message' as const, payload });
const limits = { maxPending: 10_000_000, maxPendingPerSession: 1_000_000 };
/** INBOX_UNAVAILABLE errors seen (retried, as an application would), printed at the end. */
const unavailable: string[] = [];

/** The p-th percentile (0–1) of `values`, in the unit they are in. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

/** One round of `accept` latency: LATENCY_ACCEPTS accepts one at a time; returns [p50, p99] in ns. */
async function latencyRound(inbox: Inbox, round: number): Promise<[number, number]> {
  const times: number[] = [];
  for (let i = 0; i < LATENCY_ACCEPTS; i++) {
    const id = `l${round}-${i}-${randomBytes(4).toString('hex')}`;
    const start = process.hrtime.bigint();
    await inbox.accept({ sessionKey: `s${i % SESSIONS}`, signal: text('hi'), id });
    times.push(Number(process.hrtime.bigint() - start));
  }
  return [percentile(times, 0.5), percentile(times, 0.99)];
}

interface Round {
  accepted: number;
  settledWhileAccepting: number;
  drained: number;
  /** Accepted per second with the workers paused: the producer side alone. */
  acceptedAlone: number;
  /** CPU ns per accept with the workers paused: the producer process's, and the nats-server's (NaN when not measured). */
  producerCpu: number;
  serverCpu: number;
}

/** CALLERS callers accepting for THROUGHPUT_MS; the rate and the CPU ns per accept of this process and of the server. */
async function acceptPhase(
  producer: Inbox,
  label: string,
  server?: Server,
): Promise<{ rate: number; producerCpu: number; serverCpu: number }> {
  const cpu0 = process.cpuUsage();
  const server0 = server?.cpuUs() ?? Number.NaN;
  let accepted = 0;
  const start = performance.now();
  const deadline = start + THROUGHPUT_MS;
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const id = `${label}-${caller}-${i}`;
        try {
          await producer.accept({ sessionKey: `s${(caller * 7 + i) % SESSIONS}`, signal: text('go'), id });
          accepted++;
        } catch (error) {
          if ((error as { code?: string }).code !== 'INBOX_UNAVAILABLE') throw error;
          unavailable.push((error as Error).message.slice(0, 160));
        }
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const serverUs = (server?.cpuUs() ?? Number.NaN) - server0;
  return {
    rate: accepted / ((performance.now() - start) / 1000),
    producerCpu: ((cpu.user + cpu.system) * 1000) / accepted,
    serverCpu: (serverUs * 1000) / accepted,
  };
}

/**
 * One throughput round: CALLERS callers accept for THROUGHPUT_MS with the workers paused, then
 * for THROUGHPUT_MS while the 2 workers settle, then the workers alone for THROUGHPUT_MS.
 */
async function throughputRound(producer: Inbox, settlers: Settlers, round: number, server?: Server): Promise<Round> {
  const alone = await acceptPhase(producer, `a${round}`, server);
  settlers.run();
  const settled0 = await settlers.settled();
  const start = performance.now();
  const busy = await acceptPhase(producer, `t${round}`);
  const seconds = (performance.now() - start) / 1000;
  const settled1 = await settlers.settled();
  const drainStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, THROUGHPUT_MS));
  const settled2 = await settlers.settled();
  const drainSeconds = (performance.now() - drainStart) / 1000;
  await settlers.pause();
  return {
    accepted: busy.rate,
    settledWhileAccepting: (settled1 - settled0) / seconds,
    drained: (settled2 - settled1) / drainSeconds,
    acceptedAlone: alone.rate,
    producerCpu: alone.producerCpu,
    serverCpu: alone.serverCpu,
  };
}

interface Measured {
  p50: number[];
  p99: number[];
  rounds: Round[];
}

/** One mode's side of an inbox: over a stream (a table) of its own, its producer here and its 2 worker processes. */
interface Side {
  readonly als: boolean;
  readonly producer: Inbox;
  readonly settlers: Settlers;
  readonly measured: Measured;
}

/** Runs `fn` as is, or with `als` inside the benchmarks' AsyncLocalStorage (turned off again after). */
function inMode<T>(als: boolean, fn: () => Promise<T>): Promise<T> {
  return als ? inAls(fn).finally(leaveAls) : fn();
}

/**
 * Measures one inbox in both modes side by side: `open(als)` gives each mode's producer and its
 * workers' arguments (a stream or table of its own). After a warm-up latency round of each,
 * MIN_ROUNDS rounds of: a latency round of each mode, then a throughput round of each. Results
 * by mode ('' and '@als').
 */
async function measureInbox(
  open: (als: boolean) => Promise<{ producer: Inbox; settlerArgs: readonly string[] }>,
  server?: Server,
): Promise<Record<string, Measured>> {
  const sides: Side[] = [];
  try {
    for (const als of [false, true]) {
      const { producer, settlerArgs } = await open(als);
      sides.push({
        als,
        producer,
        settlers: new Settlers(settlerArgs, als),
        measured: { p50: [], p99: [], rounds: [] },
      });
    }
    await Promise.all(sides.map((side) => side.settlers.ready()));
    for (const side of sides) await inMode(side.als, () => latencyRound(side.producer, -1)); // warm-up
    for (let round = 0; round < MIN_ROUNDS; round++) {
      for (const { als, producer, measured } of sides) {
        const [p50, p99] = await inMode(als, () => latencyRound(producer, round));
        measured.p50.push(p50);
        measured.p99.push(p99);
      }
      for (const { als, producer, settlers, measured } of sides)
        measured.rounds.push(await inMode(als, () => throughputRound(producer, settlers, round, server)));
    }
  } finally {
    for (const { producer, settlers } of sides) {
      await settlers.stop();
      await producer.close();
    }
  }
  if (unavailable.length > 0) {
    console.log(`${unavailable.length} INBOX_UNAVAILABLE errors (retried), first: ${unavailable[0]}`);
    unavailable.length = 0;
  }
  return { '': (sides[0] as Side).measured, [ALS]: (sides[1] as Side).measured };
}

const server = await startServer();
if (server === undefined) {
  console.log('\n## nats: SKIPPED — nats-server could not be started (install it, or set NATS_SERVER)');
  process.exit(0);
}
let postgres: Record<string, Measured> | undefined;
let jetstream: Record<string, Measured>;
const recoveries: number[] = [];
const admin = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 3000 });
admin.on('error', () => undefined);
const table = `bench_inbox_${randomBytes(4).toString('hex')}`;
/** The PostgreSQL inbox tables of each mode. */
const tables = [table, `${table}_als`];
try {
  const stream = `BENCH_${randomBytes(4).toString('hex')}`;
  jetstream = await measureInbox(async (als) => {
    const name = als ? `${stream}_ALS` : stream;
    const producer = new JetStreamInbox({ servers: server.url, stream: name, ...limits });
    await producer.provision();
    return { producer, settlerArgs: ['nats', server.url, name] };
  }, server);
  const pgUp = await admin.query('SELECT 1').then(
    () => true,
    (error: unknown) => {
      console.log(`PostgreSQL not reachable (${String(error)}): no comparison, no recovery figure`);
      return false;
    },
  );
  if (pgUp) {
    for (let round = 0; round < MIN_ROUNDS; round++)
      recoveries.push(await recoveryRound({ servers: server.url, url, table: `${table}_store`, round }));
    postgres = await measureInbox(async (als) => {
      const name = tables[als ? 1 : 0] as string;
      const producer = new PostgresInbox({ connectionString: url, table: name, maxConnections: 8, ...limits });
      await producer.migrate();
      return { producer, settlerArgs: ['pg', url, name] };
    });
  }
} finally {
  server.stop();
  await admin
    .query(
      `SELECT string_agg(format('DROP TABLE IF EXISTS %I CASCADE', tablename), '; ') AS sql FROM pg_tables WHERE tablename LIKE $1`,
      [`${table}%`],
    )
    .then(async (r) => {
      const sql = (r.rows[0] as { sql: string | null } | undefined)?.sql;
      if (sql !== null && sql !== undefined) await admin.query(sql);
      for (const t of tables) {
        await admin.query(`DROP SEQUENCE IF EXISTS "${t}_order"`);
        await admin.query(`DROP FUNCTION IF EXISTS "${t}_accept", "${t}_accept_many"`);
      }
    })
    .catch(() => undefined);
  await admin.end();
}

const workload = `nats: JetStream inbox (nats-server, file storage, loopback), ${SESSIONS} sessions`;
const of = (m: Measured | undefined, key: keyof Round): number[] => m?.rounds.map((r) => r[key]) ?? [];
const vs = (m: Measured | undefined, samples: number[], unit: 'ms' | '/s' | 'µs'): string => {
  if (m === undefined) return 'PostgreSQL inbox not measured';
  const v = median(samples);
  if (unit === 'ms') return `PostgreSQL inbox ${(v / 1e6).toFixed(2)} ms`;
  if (unit === 'µs') return `PostgreSQL inbox ${(v / 1e3).toFixed(0)} µs`;
  return `PostgreSQL inbox ${Math.round(v).toLocaleString('en-US')}/s`;
};
console.log(
  `\nfigures ending ${ALS}: the same, measured with an AsyncLocalStorage active in every process ` +
    "(the producer's accepts in this one, the 2 worker processes; the PostgreSQL inbox compared in the same mode)",
);
for (const [mode, j] of Object.entries(jetstream)) {
  const p = postgres?.[mode];
  figure({
    workload,
    name: `accept p50, one at a time${mode}`,
    unit: 'ns',
    samples: j.p50,
    target: { atMost: 2_000_000 },
    against: vs(p, p?.p50 ?? [], 'ms'),
  });
  figure({
    workload,
    name: `accept p99, one at a time${mode}`,
    unit: 'ns',
    samples: j.p99,
    target: { atMost: 20_000_000 },
    against: vs(p, p?.p99 ?? [], 'ms'),
  });
  figure({
    workload,
    name: `accepted signals per second, ${CALLERS} callers, 2 worker processes settling${mode}`,
    unit: '/s',
    samples: of(j, 'accepted'),
    target: { atLeast: 10_000 },
    against: vs(p, of(p, 'accepted'), '/s'),
  });
  figure({
    workload,
    name: `settled per second meanwhile (2 worker processes, inbox only)${mode}`,
    unit: '/s',
    samples: of(j, 'settledWhileAccepting'),
    against: vs(p, of(p, 'settledWhileAccepting'), '/s'),
  });
  figure({
    workload,
    name: `settled per second, 2 worker processes draining the backlog${mode}`,
    unit: '/s',
    samples: of(j, 'drained'),
    against: vs(p, of(p, 'drained'), '/s'),
  });
  figure({
    workload,
    name: `accepted signals per second, ${CALLERS} callers, no worker running${mode}`,
    unit: '/s',
    samples: of(j, 'acceptedAlone'),
    against: vs(p, of(p, 'acceptedAlone'), '/s'),
  });
  figure({
    workload,
    name: `CPU per accept, producer process (no worker running)${mode}`,
    unit: 'ns',
    samples: of(j, 'producerCpu'),
    against: vs(p, of(p, 'producerCpu'), 'µs'),
  });
  figure({
    workload,
    name: `CPU per accept, nats-server (no worker running)${mode}`,
    unit: 'ns',
    samples: of(j, 'serverCpu'),
  });
  if (p !== undefined) {
    const pgAccepted = of(p, 'accepted');
    figure({
      workload,
      name: `accepted per second, JetStream / PostgreSQL inbox${mode}`,
      unit: 'x',
      samples: of(j, 'accepted').map((v, i) => v / (pgAccepted[i] ?? v)),
    });
    const pgAlone = of(p, 'acceptedAlone');
    figure({
      workload,
      name: `accepted per second, no worker running, JetStream / PostgreSQL${mode}`,
      unit: 'x',
      samples: of(j, 'acceptedAlone').map((v, i) => v / (pgAlone[i] ?? v)),
    });
  }
}
if (recoveries.length > 0) {
  figure({
    workload: 'nats: JetStream inbox, PostgreSQL checkpoint store: recovery after kill -9, leaseMs 2,000, pollMs 100',
    name: 'kill → entry settled by another worker',
    unit: 'ns',
    samples: recoveries.map((ms) => ms * 1e6),
    target: { atMost: 3_000_000_000 },
    against: 'leaseMs + 1 s',
  });
}
