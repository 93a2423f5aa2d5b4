// `--workers N`: the desk split over processes. The web tier (this process) serves HTTP and only
// accepts messages into a durable inbox — a SqliteInbox in the sessions' own file — with
// `worker: false`; N worker processes (src/worker.ts) lease sessions from the inbox, apply the
// turns and publish each turn's events, which the web tier streams to the browser as if the turn
// ran here. A worker killed mid-reply loses its lease; another one applies the turn again, and
// the page replays the new attempt (`restarted`, then the resume route).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ChatModel } from '@signalyard/core';
import { SqliteInbox } from '@signalyard/store-sqlite';
import type { Runner } from 'signalyard';
import { deskRunner, type RefundLedger } from './desk.js';

/** The example's folder: workers start there, so its dependencies resolve. */
const EXAMPLE_DIR = fileURLToPath(new URL('..', import.meta.url));
/** The worker process's script. */
const WORKER_SCRIPT = fileURLToPath(new URL('./worker.ts', import.meta.url));

/** Options of {@link deskWorker} and {@link deskWebTier}. */
export interface DeskTierOptions {
  /** The SQLite file of the sessions and of the inbox (shared by every process). */
  readonly dbPath: string;
  /** The model the worker's agents call (the web tier calls none). */
  readonly model: ChatModel;
  /** How long a worker's lease on a session lasts unless renewed: a killed worker's turns start again after it. Default 5,000 ms. */
  readonly leaseMs?: number;
  /** How often the inbox looks for what other processes wrote. Default 50 ms. */
  readonly pollMs?: number;
  /** Where the refund tool records its refunds (a worker's). */
  readonly ledger?: RefundLedger;
}

/** The web tier's runner: accepts into the inbox, streams what the workers publish, applies nothing. */
export function deskWebTier(opts: Omit<DeskTierOptions, 'leaseMs' | 'ledger'>): Runner {
  return deskRunner({
    dbPath: opts.dbPath,
    model: opts.model,
    inbox: new SqliteInbox({ path: opts.dbPath, pollMs: opts.pollMs ?? 50 }),
    worker: false,
  });
}

/** A worker's runner: leases sessions from the inbox and applies their turns. */
function deskWorker(opts: DeskTierOptions): Runner {
  const pollMs = opts.pollMs ?? 50;
  return deskRunner({
    dbPath: opts.dbPath,
    model: opts.model,
    ...(opts.ledger === undefined ? {} : { ledger: opts.ledger }),
    inbox: new SqliteInbox({ path: opts.dbPath, pollMs }),
    worker: { leaseMs: opts.leaseMs ?? 5000, pollMs },
  });
}

/** A worker process. */
export interface DeskWorkerProcess {
  /** Its operating-system process (`kill('SIGKILL')` to see a turn move to another worker). */
  readonly process: ChildProcess;
  /** Resolves once its runner is up (it said `ready`). */
  readonly ready: Promise<void>;
  /** Resolves when it has exited. */
  readonly exited: Promise<void>;
  /** What it wrote to stderr lately (for a failure's message). */
  stderr(): string;
  /** Asks it to close its runner and exit; kills it after `ms`. */
  stop(ms?: number): Promise<void>;
}

/** Options of {@link spawnDeskWorkers}. */
export interface SpawnDeskWorkersOptions {
  /** How many worker processes. */
  readonly count: number;
  /** The SQLite file of the sessions and the inbox. */
  readonly dbPath: string;
  /** The worker's lease, in ms (see {@link DeskTierOptions.leaseMs}). */
  readonly leaseMs?: number;
  /** Another worker script (a test's: the same worker with a model it controls). Default src/worker.ts. */
  readonly script?: string;
  /** Called with each IPC message a worker sends (a test's script talks to its test). */
  readonly onMessage?: (worker: DeskWorkerProcess, message: unknown) => void;
}

/** Starts `count` worker processes over `dbPath` (run with tsx and the workspace's source condition). */
export function spawnDeskWorkers(opts: SpawnDeskWorkersOptions): DeskWorkerProcess[] {
  const args = ['--db', opts.dbPath, ...(opts.leaseMs === undefined ? [] : ['--lease-ms', String(opts.leaseMs)])];
  return Array.from({ length: opts.count }, () => spawnWorker(opts.script ?? WORKER_SCRIPT, args, opts.onMessage));
}

function spawnWorker(
  script: string,
  args: readonly string[],
  onMessage: SpawnDeskWorkersOptions['onMessage'],
): DeskWorkerProcess {
  const child = spawn(process.execPath, ['--conditions=@signalyard/source', '--import', 'tsx', script, ...args], {
    cwd: EXAMPLE_DIR,
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
    process.stderr.write(chunk);
  });
  const exited = new Promise<void>((done) =>
    child.once('exit', () => {
      done();
    }),
  );
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message) => {
      if ((message as { type?: unknown }).type === 'ready') resolve();
    });
    void exited.then(() => {
      reject(new Error(`a desk worker exited before it was ready:\n${stderr}`));
    });
  });
  ready.catch(() => undefined); // read by whoever waits for it
  const worker: DeskWorkerProcess = {
    process: child,
    ready,
    exited,
    stderr: () => stderr,
    stop: async (ms = 10_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), ms);
      await exited;
      clearTimeout(timer);
    },
  };
  if (onMessage !== undefined)
    child.on('message', (message) => {
      onMessage(worker, message);
    });
  return worker;
}

/**
 * A worker process's main: reads `--db PATH [--lease-ms N]`, runs {@link deskWorker} on `model`
 * until SIGTERM / SIGINT, and tells its parent `ready` over IPC (when it has one).
 */
export function serveDeskWorker(model: ChatModel, argv: readonly string[] = process.argv.slice(2)): Runner {
  const { values } = parseArgs({
    args: [...argv],
    options: { db: { type: 'string' }, 'lease-ms': { type: 'string' } },
  });
  if (values.db === undefined) throw new Error('a desk worker needs --db PATH (the web tier’s SQLite file)');
  const leaseMs = values['lease-ms'] === undefined ? undefined : Number(values['lease-ms']);
  const runner = deskWorker({ dbPath: values.db, model, ...(leaseMs === undefined ? {} : { leaseMs }) });
  // The runner's polling does not hold a process open (a runner inside an app must let it exit):
  // a worker process stays up until it is told to stop.
  const alive = setInterval(() => undefined, 1 << 30);
  const stop = (): void => {
    clearInterval(alive);
    void runner.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.send?.({ type: 'ready', pid: process.pid });
  return runner;
}
