// The JetStream inbox beside the PostgreSQL inbox, in one run: `accept` latency (p50 and p99 of
// one accept at a time, over 100 sessions; targets 2 ms and 20 ms), accepted signals per second
// with 64 accepts in flight while 2 workers settle (acquire → read → beginDelivery → putOutcome →
// ack; no engine and no checkpoint store), then how fast the 2 workers settle the backlog once the
// producers stop (the inbox's own ceiling one entry at a time; a Runner's is bounded by its
// store), and the ratio of the JetStream figures to PostgreSQL's.
// Starts its own `nats-server -js` (file storage, temporary directory); without the binary it
// says so and skips. Needs PostgreSQL at DATABASE_URL or postgres://postgres@127.0.0.1:5432/test
// for the comparison (without it the JetStream figures are printed alone).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Inbox } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresInbox } from '@signalyard/store-postgres';
import pg from 'pg';
import { MIN_ROUNDS, figure, median } from '../../../scripts/bench/harness.mjs';

const SESSIONS = 100;
const LATENCY_ACCEPTS = 1000;
const IN_FLIGHT = 64;
const THROUGHPUT_MS = 1500;
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const text = (payload: string) => ({ kind: 'user_message' as const, payload });
/** INBOX_UNAVAILABLE errors seen (retried, as an application would), printed at the end. */
const unavailable: string[] = [];

/** Starts nats-server -js on `port` with a temporary store; undefined when the binary is missing. */
async function startServer(): Promise<{ url: string; stop: () => void } | undefined> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const dir = mkdtempSync(join(tmpdir(), 'signalyard-nats-bench-'));
  const child = spawn(
    process.env.NATS_SERVER ?? 'nats-server',
    ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir],
    {
      stdio: 'ignore',
    },
  );
  const started = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false));
    setTimeout(() => resolve(child.exitCode === null), 700);
  });
  const stop = (): void => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  if (!started) {
    stop();
    return undefined;
  }
  return { url: `nats://127.0.0.1:${port}`, stop };
}

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

/** Settles what its leases hold until `stop()`; counts the entries settled. */
function worker(inbox: Inbox, id: string): { settled: () => number; lost: () => number; stop: () => Promise<void> } {
  let settled = 0;
  let running = true;
  let lost = 0;
  const loop = (async () => {
    while (running) {
      const leases = await inbox.acquire(id, { leaseMs: 30_000, max: 50 });
      if (leases.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const lease of leases) {
        try {
          for await (const entry of inbox.read(lease)) {
            await inbox.beginDelivery(entry);
            await inbox.putOutcome(
              entry.receiptId,
              { sessionKey: entry.sessionKey, agentId: 'a', status: 'completed' },
              60_000,
            );
            await inbox.ack(entry);
            settled++;
            if (!running) break;
          }
          await inbox.release(lease);
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (code !== 'LEASE_LOST' && code !== 'INBOX_UNAVAILABLE') throw error;
          if (code === 'INBOX_UNAVAILABLE') unavailable.push((error as Error).message.slice(0, 160));
          lost++; // another worker (or this one, later) settles the rest, as a Runner would
        }
      }
    }
  })();
  return {
    settled: () => settled,
    lost: () => lost,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** One throughput round: IN_FLIGHT accepts at a time for THROUGHPUT_MS while 2 workers settle, then THROUGHPUT_MS of the workers alone; [accepted/s, settled/s of the second part]. */
async function throughputRound(producer: Inbox, workers: Inbox[], round: number): Promise<[number, number]> {
  const running = workers.map((w, i) => worker(w, `w${i}`));
  let accepted = 0;
  const start = performance.now();
  const deadline = start + THROUGHPUT_MS;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, lane) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const id = `t${round}-${lane}-${i}`;
        try {
          await producer.accept({ sessionKey: `s${(lane * 7 + i) % SESSIONS}`, signal: text('go'), id });
          accepted++;
        } catch (error) {
          if ((error as { code?: string }).code !== 'INBOX_UNAVAILABLE') throw error;
          unavailable.push((error as Error).message.slice(0, 160));
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  // then the settling rate on its own: producers stopped, the workers drain the backlog
  const before = running.reduce((sum, w) => sum + w.settled(), 0);
  const drainStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, THROUGHPUT_MS));
  const settled = running.reduce((sum, w) => sum + w.settled(), 0) - before;
  const drainSeconds = (performance.now() - drainStart) / 1000;
  for (const w of running) await w.stop();
  return [accepted / seconds, settled / drainSeconds];
}

interface Measured {
  p50: number[];
  p99: number[];
  accepted: number[];
  settled: number[];
}

async function measureInbox(open: () => Inbox): Promise<Measured> {
  const producer = open();
  const workers = [open(), open()];
  const m: Measured = { p50: [], p99: [], accepted: [], settled: [] };
  await latencyRound(producer, -1); // warm-up
  for (let round = 0; round < MIN_ROUNDS; round++) {
    const [p50, p99] = await latencyRound(producer, round);
    m.p50.push(p50);
    m.p99.push(p99);
    const [accepted, settled] = await throughputRound(producer, workers, round);
    m.accepted.push(accepted);
    m.settled.push(settled);
  }
  for (const inbox of [producer, ...workers]) await inbox.close();
  if (unavailable.length > 0) {
    console.log(`${unavailable.length} INBOX_UNAVAILABLE errors (retried), first: ${unavailable[0]}`);
    unavailable.length = 0;
  }
  return m;
}

const server = await startServer();
if (server === undefined) {
  console.log('\n## nats: SKIPPED — nats-server could not be started (install it, or set NATS_SERVER)');
  process.exit(0);
}
let postgres: Measured | undefined;
let jetstream: Measured;
try {
  const stream = `BENCH_${randomBytes(4).toString('hex')}`;
  const first = new JetStreamInbox({
    servers: server.url,
    stream,
    maxPending: 10_000_000,
    maxPendingPerSession: 1_000_000,
  });
  await first.provision();
  await first.close();
  jetstream = await measureInbox(
    () => new JetStreamInbox({ servers: server.url, stream, maxPending: 10_000_000, maxPendingPerSession: 1_000_000 }),
  );
} finally {
  server.stop();
}
const admin = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 3000 });
admin.on('error', () => undefined);
const table = `bench_inbox_${randomBytes(4).toString('hex')}`;
try {
  await admin.query('SELECT 1');
  const first = new PostgresInbox({
    connectionString: url,
    table,
    maxPending: 10_000_000,
    maxPendingPerSession: 1_000_000,
  });
  await first.migrate();
  await first.close();
  postgres = await measureInbox(
    () =>
      new PostgresInbox({
        connectionString: url,
        table,
        maxConnections: 8,
        maxPending: 10_000_000,
        maxPendingPerSession: 1_000_000,
      }),
  );
} catch (error) {
  console.log(`PostgreSQL inbox not measured: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  await admin
    .query(
      `SELECT string_agg(format('DROP TABLE IF EXISTS %I CASCADE', tablename), '; ') AS sql FROM pg_tables WHERE tablename LIKE $1`,
      [`${table}%`],
    )
    .then(async (r) => {
      const sql = (r.rows[0] as { sql: string | null } | undefined)?.sql;
      if (sql !== null && sql !== undefined) await admin.query(sql);
    })
    .catch(() => undefined);
  await admin.end();
}

const workload = `nats: JetStream inbox (nats-server, file storage, loopback), ${SESSIONS} sessions`;
const vs = (m: Measured | undefined, key: keyof Measured, unit: string): string =>
  m === undefined
    ? 'PostgreSQL inbox not measured'
    : `PostgreSQL inbox ${Math.round(median(m[key]) / (unit === 'ms' ? 1e6 : 1)).toLocaleString('en-US')}${unit === 'ms' ? ' ms' : '/s'}`;
figure({
  workload,
  name: 'accept p50, one at a time',
  unit: 'ns',
  samples: jetstream.p50,
  target: { atMost: 2_000_000 },
  against: vs(postgres, 'p50', 'ms'),
});
figure({
  workload,
  name: 'accept p99, one at a time',
  unit: 'ns',
  samples: jetstream.p99,
  target: { atMost: 20_000_000 },
  against: vs(postgres, 'p99', 'ms'),
});
figure({
  workload,
  name: `accepted signals per second, ${IN_FLIGHT} in flight, 2 workers settling`,
  unit: '/s',
  samples: jetstream.accepted,
  target: { atLeast: 10_000 },
  against: vs(postgres, 'accepted', '/s'),
});
figure({
  workload,
  name: 'settled signals per second, 2 workers draining (inbox only, no store)',
  unit: '/s',
  samples: jetstream.settled,
  against: vs(postgres, 'settled', '/s'),
});
if (postgres !== undefined) {
  const pgAccepted = postgres.accepted;
  figure({
    workload,
    name: 'accepted per second, JetStream / PostgreSQL inbox',
    unit: 'x',
    samples: jetstream.accepted.map((v, i) => v / (pgAccepted[i] ?? v)),
  });
}
