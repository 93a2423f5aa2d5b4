// Issue-40 cases that need worker PROCESSES sharing one SQLite file (the test process is the
// producer, a runner with `worker: false`): a kill -9 between ctx.commit and the final save; and
// collect, interrupt and stop reaching the session's lease holder while another worker runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal, type Outcome } from '@signalyard/core';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { createRunner, type Runner } from 'signalyard';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const script = fileURLToPath(new URL('./fixtures/inbox-worker.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-inbox-workers-'));
let files = 0;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Report {
  type: string;
  id?: number;
  agent?: string;
  texts?: string[];
  history?: string[];
  key?: string;
  receiptId?: string;
  seq?: string;
}

/** One worker process running fixtures/inbox-worker.ts. */
class Worker {
  readonly process: ChildProcess;
  readonly reports: Report[] = [];
  stderr = '';
  readonly #waiters: { test: (r: Report) => boolean; resolve: (r: Report) => void }[] = [];

  constructor(
    readonly name: string,
    path: string,
    opts: { hang?: boolean; leaseMs?: number },
  ) {
    const config = {
      id: name,
      leaseMs: opts.leaseMs ?? 1000,
      pollMs: 50,
      signals: 0,
      sessions: 0,
      produceMs: 0,
      hang: opts.hang === true,
    };
    this.process = spawn(
      process.execPath,
      ['--conditions=@signalyard/source', '--import', 'tsx', script, path, JSON.stringify(config)],
      {
        cwd: packageDir,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
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
      this.kill();
    });
  }

  /** Resolves with the first report (already received or to come) that passes `test`. */
  next(test: (r: Report) => boolean, what: string): Promise<Report> {
    const seen = this.reports.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name}: no ${what} within 60 s; stderr:\n${this.stderr}`)),
        60_000,
      );
      this.#waiters.push({
        test,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      });
    });
  }

  finish(id: number, reply: string): void {
    this.process.send({ type: 'finish', id, reply });
  }

  kill(): void {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
  }
}

/** The first report passing `test` from any of `workers`, with the worker that sent it. */
async function fromAny(
  workers: readonly Worker[],
  test: (r: Report) => boolean,
  what: string,
): Promise<{ worker: Worker; report: Report }> {
  return Promise.race(workers.map(async (worker) => ({ worker, report: await worker.next(test, what) })));
}

function setup(): { path: string; producer: Runner; inbox: SqliteInbox } {
  const path = join(dir, `workers-${String(files++)}.db`);
  const inbox = new SqliteInbox({ path, pollMs: 50 });
  const store = new SqliteCheckpointStore({ path });
  const producer = createRunner({
    store,
    inbox,
    worker: false,
    agents: ['queue', 'collect', 'interrupt', 'desk', 'committer'].map((id) => ({
      id,
      engine: () => Promise.resolve({}),
    })),
  });
  cleanup.push(async () => {
    await producer.close();
    await inbox.close();
    await store.close();
  });
  return { path, producer, inbox };
}

const say = (text: string) => signal(SignalKind.UserMessage, text);
const userTexts = async (runner: Runner, key: string): Promise<string[]> =>
  ((await runner.session(key))?.history ?? []).filter((m) => m.role === 'user').map((m) => m.content);

describe('a kill -9 between ctx.commit and the final save', () => {
  it(
    're-applies the entry from the commit: the user message once, the claim answered outcome unknown',
    { timeout: 180_000 },
    async () => {
      const { path, producer } = setup();
      const first = new Worker('w1', path, { hang: true });
      const key = 'agent:committer:k';
      const receipt = await producer.accept(key, say('pay order 7'));
      const committed = await first.next((r) => r.type === 'committed', 'commit');
      first.kill(); // after the commit, before the final save
      const second = new Worker('w2', path, {});
      const outcome = await producer.outcome(receipt.receiptId, { timeoutMs: 60_000 });
      expect(outcome.status).toBe('completed');
      const history = (await producer.session(key))?.history ?? [];
      expect(history.map((m) => m.content)).toEqual([
        'pay order 7',
        `outcome unknown: not retried ${String(committed.key)}`,
      ]);
      // The key is the entry's receipt id: the same on the redelivery.
      expect(committed.key).toBe(`${receipt.receiptId}:write`);
      expect(second.reports.some((r) => r.type === 'committed')).toBe(false);
    },
  );

  it(
    'a crew call claimed after approval and cut off by the kill is answered `outcome unknown: not retried`, never run again',
    { timeout: 180_000 },
    async () => {
      const { path, producer } = setup();
      const first = new Worker('w1', path, { hang: true });
      const key = 'agent:desk:k';
      const asked = await producer.dispatch(key, say('refund order 7'));
      expect(asked.status).toBe('paused');
      const [pending] = asked.pendingApprovals ?? [];
      const approving = producer.approve(key, [{ id: pending?.id ?? '', approved: true }]);
      const ran = await first.next((r) => r.type === 'tool', 'the refund');
      expect(ran.key).toBe(pending?.idempotencyKey); // the asking turn's key
      first.kill(); // the refund ran (or not): its claim is committed, its result is not
      const second = new Worker('w2', path, {});
      const done = await approving;
      expect(done.status).toBe('completed');
      const history = (await producer.session(key))?.history ?? [];
      expect(history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['refund order 7']);
      expect(history.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['outcome unknown: not retried']);
      expect(second.reports.some((r) => r.type === 'tool')).toBe(false);
    },
  );
});

describe('whenBusy and stops across two worker processes', () => {
  async function twoWorkers(path: string): Promise<Worker[]> {
    return [new Worker('w1', path, { leaseMs: 5000 }), new Worker('w2', path, { leaseMs: 5000 })];
  }

  it(
    "collect: messages accepted while the lease holder's turn runs are answered by its next turn, together",
    { timeout: 180_000 },
    async () => {
      const { path, producer } = setup();
      const workers = await twoWorkers(path);
      const key = 'agent:collect:k';
      const a = await producer.accept(key, say('a'));
      const { worker: holder, report: turn0 } = await fromAny(workers, (r) => r.type === 'turn', 'the first turn');
      expect(turn0.texts).toEqual(['a']);
      const b = await producer.accept(key, say('b'));
      const c = await producer.accept(key, say('c'));
      await holder.next((r) => r.type === 'read' && r.receiptId === c.receiptId, 'c read by the lease holder');
      holder.finish(turn0.id ?? -1, 'ra');
      const turn1 = await holder.next((r) => r.type === 'turn' && r.id !== turn0.id, 'the collecting turn');
      expect(turn1.texts).toEqual(['b', 'c']);
      holder.finish(turn1.id ?? -1, 'rbc');
      const outcomes: Outcome[] = await Promise.all(
        [a, b, c].map((r) => producer.outcome(r.receiptId, { timeoutMs: 60_000 })),
      );
      expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed', 'completed']);
      expect(outcomes.map((o) => o.mergedWith)).toEqual([undefined, 2, 2]);
      expect((await producer.session(key))?.history.map((m) => m.content)).toEqual(['a', 'ra', 'b', 'c', 'rbc']);
      const other = workers.find((w) => w !== holder);
      expect(other?.reports.some((r) => r.type === 'turn')).toBe(false);
    },
  );

  it(
    'interrupt: a message accepted while the lease holder runs a turn stops it; one turn answers with both in the history',
    { timeout: 180_000 },
    async () => {
      const { path, producer } = setup();
      const workers = await twoWorkers(path);
      const key = 'agent:interrupt:k';
      const a = await producer.accept(key, say('a'));
      const { worker: holder, report: turn0 } = await fromAny(workers, (r) => r.type === 'turn', 'the first turn');
      const b = await producer.accept(key, say('b'));
      await holder.next((r) => r.type === 'read' && r.receiptId === b.receiptId, 'b read by the lease holder');
      holder.finish(turn0.id ?? -1, 'effect of a'); // an engine without safe points runs to its end
      const turn1 = await holder.next((r) => r.type === 'turn' && r.id !== turn0.id, 'the interrupting turn');
      expect(turn1.texts).toEqual(['b']);
      expect(turn1.history).toEqual(['a', 'effect of a', 'b']);
      holder.finish(turn1.id ?? -1, 'rb');
      expect((await producer.outcome(a.receiptId, { timeoutMs: 60_000 })).status).toBe('stopped');
      expect((await producer.outcome(b.receiptId, { timeoutMs: 60_000 })).status).toBe('completed');
      expect(await userTexts(producer, key)).toEqual(['a', 'b']);
    },
  );

  it(
    'stop: entries queued behind it are settled stopped without running, while the turn in flight finishes',
    { timeout: 180_000 },
    async () => {
      const { path, producer } = setup();
      const workers = await twoWorkers(path);
      const key = 'agent:queue:k';
      const a = await producer.accept(key, say('a'));
      const { worker: holder, report: turn0 } = await fromAny(workers, (r) => r.type === 'turn', 'the first turn');
      const b = await producer.accept(key, say('b'));
      const c = await producer.accept(key, say('c'));
      await holder.next((r) => r.type === 'read' && r.receiptId === c.receiptId, 'c read by the lease holder');
      const stop = await producer.accept(key, signal(SignalKind.Stop, 'enough'));
      // The stop reaches the lease holder while a's turn is still held; b and c are settled
      // `stopped` in seq order, after a (one inboxSeq: nothing settles past an unsettled entry).
      await holder.next(
        (r) => r.type === 'read' && r.receiptId === stop.receiptId,
        'the stop read by the lease holder',
      );
      holder.finish(turn0.id ?? -1, 'ra');
      expect((await producer.outcome(b.receiptId, { timeoutMs: 60_000 })).status).toBe('stopped');
      expect((await producer.outcome(c.receiptId, { timeoutMs: 60_000 })).status).toBe('stopped');
      expect((await producer.outcome(a.receiptId, { timeoutMs: 60_000 })).status).toBe('completed');
      expect((await producer.outcome(stop.receiptId, { timeoutMs: 60_000 })).status).toBe('completed');
      expect((await producer.session(key))?.history.map((m) => m.content)).toEqual(['a', 'ra']);
      // The session takes new work afterwards.
      const d = await producer.accept(key, say('d'));
      // Either worker may take it (the holder may have given the idle session's lease up).
      const next = await fromAny(workers, (r) => r.type === 'turn' && r.texts?.[0] === 'd', 'the next turn');
      next.worker.finish(next.report.id ?? -1, 'rd');
      expect((await producer.outcome(d.receiptId, { timeoutMs: 60_000 })).status).toBe('completed');
      expect(workers.flatMap((w) => w.reports).filter((r) => r.type === 'turn')).toHaveLength(2);
    },
  );
});
