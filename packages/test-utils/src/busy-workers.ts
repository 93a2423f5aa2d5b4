/**
 * whenBusy policies and stops across two worker PROCESSES of a durable inbox (inbox.md guarantee
 * 10), for every transport: the test process is the producer (a runner with `worker: false`);
 * two worker processes (a script calling `./busy-worker-child.ts`'s `serveBusyWorker`) share its
 * inbox and store. `collect` batches the session's pending entries on the lease holder,
 * `interrupt` reaches it by notification, a `stop` settles what waits behind it `stopped` —
 * whichever worker holds the session, and the other never runs a turn of it.
 *
 * {@link busyWorkersSuite} registers the tests; {@link BusyWorker} (one worker process) and
 * {@link fromAny} serve a transport's other tests over the same worker script. This module
 * imports no Signalyard code (this package depends on nothing but vitest): the test file passes
 * core's `signal` in, and the types here are the parts the tests use.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe as vitestDescribe, expect, it } from 'vitest';

/** What a worker process reports (its held turns, the observed inbox's reads, a script's own). */
export interface BusyReport {
  readonly type: string;
  readonly id?: number;
  readonly agent?: string;
  readonly texts?: string[];
  readonly history?: string[];
  readonly key?: string;
  readonly receiptId?: string;
  readonly seq?: string;
}

/** How a {@link BusyWorker} is started. */
export interface BusyWorkerOptions {
  /** The worker script (its path). */
  readonly script: string;
  /** The working directory (the package's, whose dependencies the script imports). */
  readonly cwd: string;
  /** The script's arguments before its config. */
  readonly args: readonly string[];
  readonly leaseMs: number;
  /** Default 50. */
  readonly pollMs?: number;
  /** How long {@link BusyWorker.next} waits for a report. */
  readonly waitMs: number;
  /** More of the config (the last argument, JSON), for the script's own agents (`{ hang: true }`). */
  readonly config?: Record<string, unknown>;
}

/** One worker process; the caller kills it ({@link BusyWorker.kill}) after its test. */
export class BusyWorker {
  readonly process: ChildProcess;
  readonly reports: BusyReport[] = [];
  stderr = '';
  readonly #waiters: { test: (r: BusyReport) => boolean; resolve: (r: BusyReport) => void }[] = [];
  readonly #waitMs: number;

  constructor(
    readonly name: string,
    options: BusyWorkerOptions,
  ) {
    this.#waitMs = options.waitMs;
    const config = {
      id: name,
      leaseMs: options.leaseMs,
      pollMs: options.pollMs ?? 50,
      signals: 0,
      sessions: 0,
      produceMs: 0,
      ...options.config,
    };
    this.process = spawn(
      process.execPath,
      ['--conditions=@signalyard/source', '--import', 'tsx', options.script, ...options.args, JSON.stringify(config)],
      { cwd: options.cwd, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] },
    );
    this.process.stderr?.setEncoding('utf8');
    this.process.stderr?.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.process.on('message', (raw) => {
      const report = raw as BusyReport;
      this.reports.push(report);
      for (const w of this.#waiters.splice(0)) {
        if (w.test(report)) w.resolve(report);
        else this.#waiters.push(w);
      }
    });
  }

  /** Resolves with the first report (already received or to come) that passes `test`. */
  next(test: (r: BusyReport) => boolean, what: string): Promise<BusyReport> {
    const seen = this.reports.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${this.name}: no ${what} within ${String(this.#waitMs)} ms; stderr:\n${this.stderr}`));
      }, this.#waitMs);
      this.#waiters.push({
        test,
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
      });
    });
  }

  /** Ends the held turn `id` with `reply`. */
  finish(id: number | undefined, reply: string): void {
    this.process.send({ type: 'finish', id: id ?? -1, reply });
  }

  kill(): void {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
  }
}

/** The first report passing `test` from any of `workers`, with the worker that sent it. */
export async function fromAny(
  workers: readonly BusyWorker[],
  test: (r: BusyReport) => boolean,
  what: string,
): Promise<{ worker: BusyWorker; report: BusyReport }> {
  return Promise.race(workers.map(async (worker) => ({ worker, report: await worker.next(test, what) })));
}

/** A signalyard `Runner` with `worker: false`, as the tests drive it. */
export interface BusyProducer<G> {
  accept(sessionKey: string, signal: G): Promise<{ readonly receiptId: string }>;
  outcome(
    receiptId: string,
    opts: { timeoutMs: number },
  ): Promise<{ readonly status: string; readonly mergedWith?: number | undefined }>;
  session(
    sessionKey: string,
  ): Promise<{ readonly history: readonly { readonly role: string; readonly content: string }[] } | undefined>;
}

/** What a transport gives {@link busyWorkersSuite}. */
export interface BusyWorkersTarget<G> {
  /** The suite's title. */
  readonly title: string;
  /** core's `signal`. */
  signal(kind: 'user_message' | 'stop', payload: string): G;
  /**
   * Fresh storage for one test: the producer over it (agents `queue`, `collect` and `interrupt`),
   * the worker script's arguments, and how to close the producer and its handles.
   */
  setup(): Promise<{ producer: BusyProducer<G>; args: readonly string[]; close: () => Promise<void> }>;
  /** The worker script (calls `serveBusyWorker`) and the directory it runs in. */
  readonly script: string;
  readonly cwd: string;
  /** How long a report or an outcome may take (a cold start compiles every package with tsx). */
  readonly waitMs: number;
  /** Each test's timeout: a hang guard. */
  readonly timeoutMs: number;
  /** vitest's `describe` (the default), or one that skips without the backend (`describeNats`). */
  readonly describe?: (name: string, fn: () => void) => void;
  /** Runs before the suite's tests (starts a server). */
  readonly beforeAll?: () => Promise<void> | void;
  /** Runs after them (stops a server, drops tables). */
  readonly afterAll?: () => Promise<void> | void;
}

/** One test's producer and its two worker processes (workers' lease 5 s, poll 50 ms). */
interface Fixture<G> {
  readonly producer: BusyProducer<G>;
  readonly workers: readonly BusyWorker[];
  readonly outcomeOf: (receipt: { readonly receiptId: string }) => Promise<{ status: string; mergedWith?: number }>;
  readonly say: (text: string) => G;
}

/**
 * Registers the three tests (`collect: …`, `interrupt: …`, `stop: …`; see the module's TSDoc)
 * over one transport. Every producer and worker a test starts is closed or killed after it; the
 * suite keeps no state outside this call, so several files may call it in one vitest worker.
 */
export function busyWorkersSuite<G>(target: BusyWorkersTarget<G>): void {
  const describe = target.describe ?? vitestDescribe;
  describe(target.title, () => {
    const closers: (() => Promise<void> | void)[] = [];
    const { beforeAll: setUp, afterAll: tearDown } = target;
    if (setUp !== undefined) beforeAll(setUp);
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });
    if (tearDown !== undefined) afterAll(tearDown);

    const fixture = async (): Promise<Fixture<G>> => {
      const { producer, args, close } = await target.setup();
      closers.push(close);
      const options = { script: target.script, cwd: target.cwd, args, leaseMs: 5000, waitMs: target.waitMs };
      const workers = [new BusyWorker('w1', options), new BusyWorker('w2', options)];
      for (const w of workers)
        closers.push(() => {
          w.kill();
        });
      return {
        producer,
        workers,
        outcomeOf: (receipt) => producer.outcome(receipt.receiptId, { timeoutMs: target.waitMs }),
        say: (text) => target.signal('user_message', text),
      };
    };
    const timeout = { timeout: target.timeoutMs };
    it(
      "collect: messages accepted while the lease holder's turn runs are answered by its next turn, together",
      timeout,
      async () => collects(await fixture()),
    );
    it(
      'interrupt: a message accepted while the lease holder runs a turn stops it; one turn answers with both in the history',
      timeout,
      async () => interrupts(await fixture()),
    );
    it(
      'stop: entries queued behind it are settled stopped without running, while the turn in flight finishes',
      timeout,
      async () => stops(await fixture(), target.signal('stop', 'enough')),
    );
  });
}

const isTurn = (r: BusyReport): boolean => r.type === 'turn';

async function collects<G>({ producer, workers, outcomeOf, say }: Fixture<G>): Promise<void> {
  const key = 'agent:collect:k';
  const a = await producer.accept(key, say('a'));
  const { worker: holder, report: turn0 } = await fromAny(workers, isTurn, 'the first turn');
  expect(turn0.texts).toEqual(['a']);
  const b = await producer.accept(key, say('b'));
  const c = await producer.accept(key, say('c'));
  await holder.next((r) => r.type === 'read' && r.receiptId === c.receiptId, 'c read by the lease holder');
  holder.finish(turn0.id, 'ra');
  const turn1 = await holder.next((r) => isTurn(r) && r.id !== turn0.id, 'the collecting turn');
  expect(turn1.texts).toEqual(['b', 'c']);
  holder.finish(turn1.id, 'rbc');
  const outcomes = await Promise.all([a, b, c].map(outcomeOf));
  expect(outcomes.map((o) => o.status)).toEqual(['completed', 'completed', 'completed']);
  expect(outcomes.map((o) => o.mergedWith)).toEqual([undefined, 2, 2]);
  expect((await producer.session(key))?.history.map((m) => m.content)).toEqual(['a', 'ra', 'b', 'c', 'rbc']);
  const other = workers.find((w) => w !== holder);
  expect(other?.reports.some(isTurn)).toBe(false);
}

async function interrupts<G>({ producer, workers, outcomeOf, say }: Fixture<G>): Promise<void> {
  const key = 'agent:interrupt:k';
  const a = await producer.accept(key, say('a'));
  const { worker: holder, report: turn0 } = await fromAny(workers, isTurn, 'the first turn');
  const b = await producer.accept(key, say('b'));
  await holder.next((r) => r.type === 'read' && r.receiptId === b.receiptId, 'b read by the lease holder');
  holder.finish(turn0.id, 'effect of a'); // an engine without safe points runs to its end
  const turn1 = await holder.next((r) => isTurn(r) && r.id !== turn0.id, 'the interrupting turn');
  expect(turn1.texts).toEqual(['b']);
  expect(turn1.history).toEqual(['a', 'effect of a', 'b']);
  holder.finish(turn1.id, 'rb');
  expect((await outcomeOf(a)).status).toBe('stopped');
  expect((await outcomeOf(b)).status).toBe('completed');
  const users = ((await producer.session(key))?.history ?? []).filter((m) => m.role === 'user');
  expect(users.map((m) => m.content)).toEqual(['a', 'b']);
  const other = workers.find((w) => w !== holder);
  expect(other?.reports.some(isTurn)).toBe(false);
}

async function stops<G>({ producer, workers, outcomeOf, say }: Fixture<G>, stopSignal: G): Promise<void> {
  const key = 'agent:queue:k';
  const a = await producer.accept(key, say('a'));
  const { worker: holder, report: turn0 } = await fromAny(workers, isTurn, 'the first turn');
  const b = await producer.accept(key, say('b'));
  const c = await producer.accept(key, say('c'));
  await holder.next((r) => r.type === 'read' && r.receiptId === c.receiptId, 'c read by the lease holder');
  const stop = await producer.accept(key, stopSignal);
  // The stop reaches the lease holder while a's turn is still held; b and c are settled
  // `stopped` in seq order, after a (one inboxSeq: nothing settles past an unsettled entry).
  await holder.next((r) => r.type === 'read' && r.receiptId === stop.receiptId, 'the stop read by the lease holder');
  holder.finish(turn0.id, 'ra');
  expect((await outcomeOf(b)).status).toBe('stopped');
  expect((await outcomeOf(c)).status).toBe('stopped');
  expect((await outcomeOf(a)).status).toBe('completed');
  expect((await outcomeOf(stop)).status).toBe('completed');
  expect((await producer.session(key))?.history.map((m) => m.content)).toEqual(['a', 'ra']);
  // The session takes new work afterwards, from either worker (the idle lease may be given up).
  const d = await producer.accept(key, say('d'));
  const next = await fromAny(workers, (r) => isTurn(r) && r.texts?.[0] === 'd', 'the next turn');
  next.worker.finish(next.report.id, 'rd');
  expect((await outcomeOf(d)).status).toBe('completed');
  expect(workers.flatMap((w) => w.reports).filter(isTurn)).toHaveLength(2);
}
