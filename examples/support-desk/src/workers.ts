// `--workers N` mode: the desk's conversations settled by N worker PROCESSES through a durable
// inbox (SqliteInbox) in one SQLite file, while this process only accepts (`worker: false`) and
// waits for outcomes. Midway the worker running a turn is killed with SIGKILL; another worker
// takes the session once the lease runs out and finishes the conversation — the customer's
// messages each once in the history, the tool call under the same idempotency key.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal } from '@signalyard/core';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { createRunner, type CrewResponse, type Runner } from 'signalyard';
import type { WorkerReport } from './desk-worker.js';
import { COURIER_SESSION, courierAgent } from './workers-desk.js';

/** Options of {@link runWorkersStory}. */
export interface WorkersStoryOptions {
  /** The SQLite file the inbox and the sessions live in. */
  readonly path: string;
  /** Worker processes (at least 2). Default 2. */
  readonly workers?: number;
  /** Where the transcript goes, line by line. Default: stdout. */
  readonly write?: (line: string) => void;
}

const workerScript = fileURLToPath(new URL('./desk-worker.ts', import.meta.url));
const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** One worker process, and what it reported. */
class WorkerProcess {
  readonly child: ChildProcess;
  readonly reports: WorkerReport[] = [];
  stderr = '';
  readonly #listeners = new Set<(report: WorkerReport) => void>();

  constructor(
    readonly name: string,
    path: string,
  ) {
    this.child = spawn(
      process.execPath,
      ['--conditions=@signalyard/source', '--import', 'tsx', workerScript, path, name],
      {
        cwd: packageDir,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.child.on('message', (raw) => {
      const report = raw as WorkerReport;
      this.reports.push(report);
      for (const listener of this.#listeners) listener(report);
    });
  }

  /** The first report passing `test`, seen already or to come (`failOnExit`: rejects if the worker exits first). */
  next(test: (report: WorkerReport) => boolean, failOnExit = false): Promise<WorkerReport> {
    const seen = this.reports.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const listener = (report: WorkerReport): void => {
        if (!test(report)) return;
        this.#listeners.delete(listener);
        resolve(report);
      };
      this.#listeners.add(listener);
      if (failOnExit)
        this.child.once('exit', () => {
          reject(new Error(`worker ${this.name} exited; stderr:\n${this.stderr}`));
        });
    });
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  kill(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }

  async close(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ type: 'close' });
    await exited;
  }
}

/** The first of `workers` to report something passing `test`. */
function fromAny(workers: readonly WorkerProcess[], test: (report: WorkerReport) => boolean): Promise<WorkerReport> {
  return Promise.race(workers.map((w) => w.next(test)));
}

/** What the story saw: which worker settled each message, and which one was killed. */
export interface WorkersStoryResult {
  readonly settledBy: readonly string[];
  readonly killed: string;
  readonly toolKeys: readonly (string | undefined)[];
}

/** Runs the `--workers` story over `path`: prints the transcript, returns what happened. */
export async function runWorkersStory(options: WorkersStoryOptions): Promise<WorkersStoryResult> {
  const write = options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const count = options.workers ?? 2;
  if (!Number.isInteger(count) || count < 2) throw new Error(`--workers expects 2 or more, got ${String(count)}`);
  const store = new SqliteCheckpointStore({ path: options.path });
  const inbox = new SqliteInbox({ path: options.path });
  // This process accepts and reads outcomes; it never runs a turn.
  const desk = createRunner({ store, inbox, worker: false, agents: [courierAgent(() => undefined)] });
  const workers = Array.from({ length: count }, (_, i) => new WorkerProcess(`w${String(i + 1)}`, options.path));
  try {
    await Promise.all(workers.map((w) => w.next((r) => r.type === 'ready', true)));
    write(
      `── ${String(count)} worker processes (${workers.map((w) => w.name).join(', ')}) settle the inbox in ${options.path}; this process only accepts (worker: false)`,
    );
    return await converse(desk, workers, write);
  } finally {
    for (const w of workers)
      await w.close().catch(() => {
        w.kill();
      });
    await desk.close();
    await inbox.close();
    await store.close();
  }
}

async function converse(
  desk: Runner,
  workers: WorkerProcess[],
  write: (line: string) => void,
): Promise<WorkersStoryResult> {
  const settledBy: string[] = [];
  const toolKeys: (string | undefined)[] = [];
  const receipts: string[] = [];
  const shown = (key: string | undefined): string =>
    receipts.reduce((k, id, i) => k.replace(id, `<receipt ${String(i + 1)}>`), key ?? 'none');
  let killed = '';
  const say = async (text: string, midTurn?: () => Promise<void>): Promise<void> => {
    const turns = workers.map((w) => w.reports.filter((r) => r.type === 'turn').length);
    const receipt = await desk.accept(COURIER_SESSION, signal(SignalKind.UserMessage, text));
    receipts.push(receipt.receiptId);
    write(`── telegram · dm 2001: "${text}"   accepted (seq ${receipt.seq})`);
    await midTurn?.();
    const outcome = await desk.outcome(receipt.receiptId, { timeoutMs: 60_000 });
    // The worker that ran the last turn started for the session settled it.
    const by = workers
      .filter((w, i) => w.reports.filter((r) => r.type === 'turn').length > (turns[i] ?? 0) && w.alive)
      .map((w) => w.name);
    settledBy.push(by.join('+'));
    write(`   settled by ${by.join(', ')}`);
    const reply = (outcome.output as CrewResponse | undefined)?.visibleContent;
    if (reply !== undefined) write(`   reply   courier: "${reply}"`);
    write(`   = ${outcome.status}`);
  };
  await say('My parcel for order 6120 never arrived');
  await say('Can you check the tracking?', async () => {
    const tool = await fromAny(workers, (r) => r.type === 'tool');
    if (tool.type !== 'tool') return;
    toolKeys.push(tool.idempotencyKey);
    write(
      `   tool    track_order ${JSON.stringify(tool.args)} started on ${tool.worker} (idempotencyKey ${shown(tool.idempotencyKey)})`,
    );
    const victim = workers.find((w) => w.name === tool.worker);
    victim?.kill();
    killed = tool.worker;
    write(`   kill    ${tool.worker} killed with SIGKILL mid-turn; its lease on the session runs out in 1.5 s`);
    const again = await fromAny(workers, (r) => r.type === 'tool' && r.worker !== tool.worker);
    if (again.type !== 'tool') return;
    toolKeys.push(again.idempotencyKey);
    write(
      `   tool    track_order ${JSON.stringify(again.args)} started on ${again.worker} (idempotencyKey ${shown(again.idempotencyKey)}: the same key, so a carrier API that deduplicates sees one request)`,
    );
  });
  await say('Please resend it');
  const history = (await desk.session(COURIER_SESSION))?.history ?? [];
  write(`── ${COURIER_SESSION} after the kill (runner.session): each message once`);
  for (const m of history)
    write(
      `   ${m.role.padEnd(9)} ${m.toolCalls === undefined ? JSON.stringify(m.content) : `calls ${m.toolCalls.map((c) => c.name).join(', ')}`}`,
    );
  return { settledBy, killed, toolKeys };
}
