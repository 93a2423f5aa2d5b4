// whenBusy policies and stops across two worker PROCESSES on JetStream (inbox.md guarantee 10):
// the test process is the producer (a runner with `worker: false`) over a JetStreamInbox on a
// nats-server of the test's own and a PostgresCheckpointStore; two worker processes
// (fixtures/busy-worker.ts) share both. `collect` batches the session's pending entries on the
// lease holder, `interrupt` reaches it by notification, a `stop` settles what waits behind it
// `stopped` — whichever worker holds the session, and the other never runs a turn of it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal, type Outcome } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { DATABASE_URL, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { createRunner, type Runner } from 'signalyard';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const script = fileURLToPath(new URL('./fixtures/busy-worker.ts', import.meta.url));
const LEASE_MS = 5000;
/** Generous: a cold start compiles the TypeScript sources of every package with tsx. */
const WAIT_MS = 90_000;
const tables: string[] = [];
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

interface Report {
  type: string;
  id?: number;
  texts?: string[];
  history?: string[];
  receiptId?: string;
}

/** One worker process running fixtures/busy-worker.ts. */
class Worker {
  readonly process: ChildProcess;
  readonly reports: Report[] = [];
  stderr = '';
  readonly #waiters: { test: (r: Report) => boolean; resolve: (r: Report) => void }[] = [];

  constructor(
    readonly name: string,
    args: readonly string[],
  ) {
    const config = { id: name, leaseMs: LEASE_MS, pollMs: 50, signals: 0, sessions: 0, produceMs: 0 };
    this.process = spawn(
      process.execPath,
      ['--conditions=@signalyard/source', '--import', 'tsx', script, ...args, JSON.stringify(config)],
      { cwd: packageDir, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] },
    );
    this.process.stderr?.setEncoding('utf8');
    this.process.stderr?.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.process.on('message', (raw) => {
      const report = raw as Report;
      this.reports.push(report);
      for (const w of this.#waiters.splice(0)) {
        if (w.test(report)) w.resolve(report);
        else this.#waiters.push(w);
      }
    });
    cleanup.push(() => {
      if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
    });
  }

  /** Resolves with the first report (already received or to come) that passes `test`. */
  next(test: (r: Report) => boolean, what: string): Promise<Report> {
    const seen = this.reports.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${this.name}: no ${what} within ${String(WAIT_MS)} ms; stderr:\n${this.stderr}`));
      }, WAIT_MS);
      this.#waiters.push({
        test,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      });
    });
  }

  finish(id: number | undefined, reply: string): void {
    this.process.send({ type: 'finish', id: id ?? -1, reply });
  }
}

/** The first report passing `test` from either worker, with the worker that sent it. */
async function fromAny(
  workers: readonly Worker[],
  test: (r: Report) => boolean,
  what: string,
): Promise<{ worker: Worker; report: Report }> {
  return Promise.race(workers.map(async (worker) => ({ worker, report: await worker.next(test, what) })));
}

const say = (text: string) => signal(SignalKind.UserMessage, text);
const outcomeOf = (producer: Runner, receiptId: string): Promise<Outcome> =>
  producer.outcome(receiptId, { timeoutMs: WAIT_MS });

describeNats('whenBusy and stops across two worker processes on JetStream (PostgreSQL checkpoint store)', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server.stop();
    await dropTablesAndEnd(tables);
  });

  /** A fresh stream and table, the producer over them, and two worker processes. */
  async function setup(): Promise<{ producer: Runner; workers: Worker[] }> {
    const stream = `BUSY_${randomBytes(4).toString('hex')}`;
    const table = uniqueTable('js_busy');
    tables.push(table);
    const inbox = new JetStreamInbox({ servers: server.url, stream, leaseMs: LEASE_MS, pollMs: 50 });
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
    await inbox.provision();
    await store.migrate();
    const producer = createRunner({
      store,
      inbox,
      worker: false,
      agents: ['queue', 'collect', 'interrupt'].map((id) => ({ id, engine: () => Promise.resolve({}) })),
    });
    cleanup.push(async () => {
      await producer.close();
      await inbox.close();
      await store.close();
    });
    const args = [server.url, stream, DATABASE_URL, table];
    const workers = [new Worker('w1', args), new Worker('w2', args)];
    return { producer, workers };
  }

  it(
    "collect: messages accepted while the lease holder's turn runs are answered by its next turn, together",
    { timeout: 300_000 },
    async () => {
      const { producer, workers } = await setup();
      const key = 'agent:collect:k';
      const a = await producer.accept(key, say('a'));
      const { worker: holder, report: turn0 } = await fromAny(workers, (r) => r.type === 'turn', 'the first turn');
      expect(turn0.texts).toEqual(['a']);
      const b = await producer.accept(key, say('b'));
      const c = await producer.accept(key, say('c'));
      await holder.next((r) => r.type === 'read' && r.receiptId === c.receiptId, 'c read by the lease holder');
      holder.finish(turn0.id, 'ra');
      const turn1 = await holder.next((r) => r.type === 'turn' && r.id !== turn0.id, 'the collecting turn');
      expect(turn1.texts).toEqual(['b', 'c']);
      holder.finish(turn1.id, 'rbc');
      const outcomes = await Promise.all([a, b, c].map((r) => outcomeOf(producer, r.receiptId)));
      expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed', 'completed']);
      expect(outcomes.map((o) => o.mergedWith)).toEqual([undefined, 2, 2]);
      expect((await producer.session(key))?.history.map((m) => m.content)).toEqual(['a', 'ra', 'b', 'c', 'rbc']);
      const other = workers.find((w) => w !== holder);
      expect(other?.reports.some((r) => r.type === 'turn')).toBe(false);
    },
  );

  it(
    'interrupt: a message accepted while the lease holder runs a turn stops it; one turn answers with both in the history',
    { timeout: 300_000 },
    async () => {
      const { producer, workers } = await setup();
      const key = 'agent:interrupt:k';
      const a = await producer.accept(key, say('a'));
      const { worker: holder, report: turn0 } = await fromAny(workers, (r) => r.type === 'turn', 'the first turn');
      const b = await producer.accept(key, say('b'));
      await holder.next((r) => r.type === 'read' && r.receiptId === b.receiptId, 'b read by the lease holder');
      holder.finish(turn0.id, 'effect of a'); // an engine without safe points runs to its end
      const turn1 = await holder.next((r) => r.type === 'turn' && r.id !== turn0.id, 'the interrupting turn');
      expect(turn1.texts).toEqual(['b']);
      expect(turn1.history).toEqual(['a', 'effect of a', 'b']);
      holder.finish(turn1.id, 'rb');
      expect((await outcomeOf(producer, a.receiptId)).status).toBe('stopped');
      expect((await outcomeOf(producer, b.receiptId)).status).toBe('completed');
      const users = ((await producer.session(key))?.history ?? []).filter((m) => m.role === 'user');
      expect(users.map((m) => m.content)).toEqual(['a', 'b']);
      const other = workers.find((w) => w !== holder);
      expect(other?.reports.some((r) => r.type === 'turn')).toBe(false);
    },
  );

  it(
    'stop: entries queued behind it are settled stopped without running, while the turn in flight finishes',
    { timeout: 300_000 },
    async () => {
      const { producer, workers } = await setup();
      const key = 'agent:queue:k';
      const a = await producer.accept(key, say('a'));
      const { worker: holder, report: turn0 } = await fromAny(workers, (r) => r.type === 'turn', 'the first turn');
      const b = await producer.accept(key, say('b'));
      const c = await producer.accept(key, say('c'));
      await holder.next((r) => r.type === 'read' && r.receiptId === c.receiptId, 'c read by the lease holder');
      const stop = await producer.accept(key, signal(SignalKind.Stop, 'enough'));
      await holder.next(
        (r) => r.type === 'read' && r.receiptId === stop.receiptId,
        'the stop read by the lease holder',
      );
      holder.finish(turn0.id, 'ra');
      expect((await outcomeOf(producer, b.receiptId)).status).toBe('stopped');
      expect((await outcomeOf(producer, c.receiptId)).status).toBe('stopped');
      expect((await outcomeOf(producer, a.receiptId)).status).toBe('completed');
      expect((await outcomeOf(producer, stop.receiptId)).status).toBe('completed');
      expect((await producer.session(key))?.history.map((m) => m.content)).toEqual(['a', 'ra']);
      // The session takes new work afterwards, from either worker (the idle lease may be given up).
      const d = await producer.accept(key, say('d'));
      const next = await fromAny(workers, (r) => r.type === 'turn' && r.texts?.[0] === 'd', 'the next turn');
      next.worker.finish(next.report.id, 'rd');
      expect((await outcomeOf(producer, d.receiptId)).status).toBe('completed');
      expect(workers.flatMap((w) => w.reports).filter((r) => r.type === 'turn')).toHaveLength(2);
    },
  );
});
