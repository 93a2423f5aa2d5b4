// The PostgreSQL inbox's statements one kind at a time, by the server's own CPU: where inbox.bench.ts's
// "server processes" time goes. Not a figure of the issue; a profile of the server side.
//
// Each statement kind runs on a connection of its own, so its server process's CPU time
// (/proc/<pid>/schedstat, ns) is that kind's alone: accept (the _accept function, one entry at a
// time), acquire (leases on every key with entries), read (a page of entries for BATCH leases at a
// time), finishMany (BATCH delivery counts, then BATCH settles: what a worker's batcher sends),
// release. Rounds of KEYS keys × PER_KEY entries each; µs of server CPU per entry for each kind,
// medians over the rounds. Needs the server on this machine (it reads /proc).
//
// usage: pnpm exec tsx packages/store-postgres/bench/inbox-statements.profile.ts [src dir] [rounds]
// (not a *.bench.ts: `pnpm bench` does not run it; it needs the server on this machine)
//   [src dir]: the store-postgres src whose statements to run (default ../src), e.g. another
//   worktree's, to compare two versions alternately in the same minutes.
// env: ACCEPTERS (connections accepting at once, default 1), ACCEPT_TX (accepts per transaction,
//   default 1: what a batch would save), PLAN_MODE (plan_cache_mode of every connection).
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, Pool } from 'pg';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const src = resolve(process.argv[2] ?? new URL('../src', import.meta.url).pathname);
const ROUNDS = Number(process.argv[3] ?? 5);
const KEYS = 100;
const PER_KEY = 10;
const BATCH = 10;
/** Connections accepting at once (the producer's pool): their commits may share a WAL flush. */
const ACCEPTERS = Number(process.env.ACCEPTERS ?? 1);
/** Accepts per transaction (an experiment: what a batch of accepts would cost). */
const ACCEPT_TX = Number(process.env.ACCEPT_TX ?? 1);

const load = async (file: string): Promise<Record<string, unknown>> =>
  (await import(pathToFileURL(`${src}/${file}`).href)) as Record<string, unknown>;
const { inboxNames } = (await load('postgres-inbox-names.ts')) as { inboxNames: (t: unknown) => InboxNamesLike };
const { inboxSql } = (await load('postgres-inbox-statements.ts')) as {
  inboxSql: (n: unknown) => Record<string, string>;
};
const { migrateInbox } = (await load('postgres-inbox-schema.ts')) as {
  migrateInbox: (pool: Pool, n: unknown) => Promise<void>;
};
const { parseTableName } = (await load('postgres-table-name.ts')) as { parseTableName: (s: string) => unknown };

interface InboxNamesLike {
  entries: { sql: string };
}

const table = `sy_mb_${randomBytes(3).toString('hex')}`;
const names = inboxNames(parseTableName(table));
const sql = inboxSql(names);
const admin = new Pool({ connectionString: url, max: 2 });

/** A connection of its own, its server process's pid, and its prepared statements by text. */
interface Conn {
  readonly client: Client;
  readonly pid: number;
  readonly names: Map<string, string>;
}

async function conn(): Promise<Conn> {
  const client = new Client({ connectionString: url });
  await client.connect();
  if (process.env.PLAN_MODE !== undefined) await client.query(`SET plan_cache_mode = ${process.env.PLAN_MODE}`);
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return { client, pid: (rows[0] as { pid: number }).pid, names: new Map() };
}

async function run(c: Conn, text: string, values: unknown[]): Promise<unknown[][]> {
  let name = c.names.get(text);
  if (name === undefined) c.names.set(text, (name = `s${String(c.names.size)}`));
  return (await c.client.query({ name, text, values, rowMode: 'array' })).rows as unknown[][];
}

/** The server process's CPU so far, ns. */
function cpuNs(c: Conn): number {
  return Number(readFileSync(`/proc/${String(c.pid)}/schedstat`, 'utf8').split(' ')[0]);
}

const kinds = ['accept', 'acquire', 'read', 'begin', 'settle', 'release'] as const;
type Kind = (typeof kinds)[number];
const perEntry: Record<Kind, number[]> = { accept: [], acquire: [], read: [], begin: [], settle: [], release: [] };
const walPerEntry: Record<Kind, number[]> = { accept: [], acquire: [], read: [], begin: [], settle: [], release: [] };

async function walLsn(): Promise<bigint> {
  const { rows } = await admin.query<{ b: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS b`,
  );
  return BigInt((rows[0] as { b: string }).b.split('.')[0] as string);
}

/** Runs `body` on `c`, adding its server CPU (and WAL, whole server) per entry to `kind`'s samples. */
async function measured(kind: Kind, on: Conn | Conn[], entries: number, body: () => Promise<void>): Promise<void> {
  const conns = Array.isArray(on) ? on : [on];
  const cpuAll = (): number => conns.reduce((sum, c) => sum + cpuNs(c), 0);
  const wal0 = await walLsn();
  const cpu0 = cpuAll();
  await body();
  const cpu = cpuAll() - cpu0;
  const wal = Number((await walLsn()) - wal0);
  perEntry[kind].push(cpu / entries / 1000);
  walPerEntry[kind].push(wal / entries);
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

try {
  await migrateInbox(admin, names);
  const [acc, acq, rd, fin] = await Promise.all([conn(), conn(), conn(), conn()]);
  const accepters = [acc, ...(await Promise.all(Array.from({ length: ACCEPTERS - 1 }, conn)))];
  const keys = Array.from({ length: KEYS }, (_, i) => `agent:main:mb-${String(i)}`);
  const signalText = JSON.stringify({ kind: 'user_message', text: 'hello' });
  for (let round = -1; round < ROUNDS; round++) {
    const n = KEYS * PER_KEY;
    const keep = round >= 0;
    // each accepter takes its own keys (accepts of one key are chained, as a Runner chains them)
    const acceptAll = async (): Promise<void> => {
      await Promise.all(
        accepters.map(async (c, a) => {
          let inTx = 0;
          for (let i = a; i < n; i += ACCEPTERS) {
            if (ACCEPT_TX > 1 && inTx === 0) await c.client.query('BEGIN');
            const values = [
              randomUUID(),
              randomUUID(),
              keys[i % KEYS],
              null,
              'user_message',
              signalText,
              null,
              100000,
              10000000,
              600000,
            ];
            await run(c, sql.accept as string, values);
            if (ACCEPT_TX > 1 && ++inTx === ACCEPT_TX) {
              await c.client.query('COMMIT');
              inTx = 0;
            }
          }
          if (inTx > 0) await c.client.query('COMMIT');
        }),
      );
    };
    if (keep) await measured('accept', accepters, n, acceptAll);
    else await acceptAll();
    let leases: unknown[][] = [];
    await measured('acquire', acq, n, async () => {
      leases = await run(acq, sql.acquire as string, ['mb-worker', 30000, KEYS]);
    });
    const entries: { id: string; token: string }[] = [];
    await measured('read', rd, n, async () => {
      for (let i = 0; i < leases.length; i += BATCH) {
        const part = leases.slice(i, i + BATCH);
        const rows = await run(rd, sql.readMany as string, [
          part.map((l) => l[0]),
          part.map((l) => l[1]),
          part.map(() => '0'),
          part.map(() => 100),
        ]);
        for (const row of rows)
          entries.push({ id: row[2] as string, token: part[(row[0] as number) - 1]?.[1] as string });
      }
    });
    const outcome = JSON.stringify({ status: 'completed', receiptId: 'x', output: null });
    for (let i = 0; i < entries.length; i += BATCH) {
      const part = entries.slice(i, i + BATCH);
      await measured('begin', fin, part.length, async () => {
        const ids = part.map((e) => e.id);
        const tokens = part.map((e) => e.token);
        // The statement of a batch of delivery counts only (an older src: the one with every part).
        if (sql.finishMany_c !== undefined) await run(fin, sql.finishMany_c, [ids, tokens]);
        else await run(fin, sql.finishMany as string, [[], [], [], [], [], [], [], ids, tokens]);
      });
      await measured('settle', fin, part.length, async () => {
        const settles = [
          part.map((e) => e.id),
          part.map(() => outcome),
          part.map(() => 600000),
          part.map(() => false),
          part.map(() => 1),
        ];
        // The statement of a batch of settles only, without events (an older src: every part).
        if (sql.finishMany_s !== undefined) await run(fin, sql.finishMany_s, settles);
        else await run(fin, sql.finishMany as string, [...settles, [], [], [], []]);
      });
    }
    await measured('release', acq, n, async () => {
      for (const l of leases) await run(acq, sql.release as string, [l[0], l[1]]);
    });
    if (entries.length !== n) throw new Error(`read ${String(entries.length)} entries, expected ${String(n)}`);
  }
  console.log(
    `src ${src}; ${String(ACCEPTERS)} accepting connections; plan_cache_mode ${process.env.PLAN_MODE ?? 'auto'}; load ${loadavg()[0]?.toFixed(1) ?? '?'}; ${String(ROUNDS)} rounds of ${String(KEYS)} keys × ${String(PER_KEY)} entries, batches of ${String(BATCH)}`,
  );
  let total = 0;
  for (const kind of kinds) {
    total += median(perEntry[kind]);
    console.log(
      `  ${kind.padEnd(8)} ${median(perEntry[kind]).toFixed(1).padStart(7)} µs server CPU per entry, ${median(walPerEntry[kind]).toFixed(0).padStart(6)} WAL bytes per entry`,
    );
  }
  console.log(`  total    ${total.toFixed(1).padStart(7)} µs`);
  for (const c of [...accepters, acq, rd, fin]) await c.client.end();
} finally {
  const { rows } = await admin.query<{ s: string | null }>(
    `SELECT string_agg(format('DROP TABLE IF EXISTS %I CASCADE', tablename), '; ') AS s FROM pg_tables WHERE tablename LIKE $1`,
    [`${table}%`],
  );
  if (rows[0]?.s) await admin.query(rows[0].s);
  await admin.query(`DROP SEQUENCE IF EXISTS "${table}_order"`);
  await admin.query(`DROP FUNCTION IF EXISTS "${table}_accept", "${table}_accept_many"`);
  await admin.end();
}
