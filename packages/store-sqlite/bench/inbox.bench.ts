// The SQLite inbox (issue 40's figures), in one process over one database file (WAL,
// synchronous = NORMAL):
// - accepted → settled signals per second with 1 worker: a producer runner (`worker: false`)
//   accepts 2,000 user messages over 100 sessions (64 accepts in flight) while a worker runner
//   settles them with a trivial engine; from the first accept until the inbox is empty (target
//   >= 5,000/s). Measured plain and with an AsyncLocalStorage active (`@als`).
// - recovery after kill -9 with leaseMs 2,000: a worker PROCESS (bench/inbox-worker.ts) holds a
//   session's lease in the middle of a turn and is killed with SIGKILL; from the kill until a
//   worker in this process (pollMs 100) has settled the entry (target <= 3,000 ms: leaseMs + 1 s).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal, type ChatMessage } from '@signalyard/core';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { createRunner, type AgentDefinition, type Runner } from 'signalyard';
import { figure, median } from '../../../scripts/bench/harness.mjs';
import { ALS, inAls } from '../../../scripts/bench/modes.mjs';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-inbox-bench-'));
const machine = `${cpus()[0]?.model ?? 'unknown CPU'} (${String(cpus().length)} cores), Node ${process.version}, ${process.platform}`;
const ROUNDS = 5; // MIN_ROUNDS of the harness
const SIGNALS = 2000;
const SESSIONS = 100;
const WINDOW = 64;
let files = 0;

const reply: readonly ChatMessage[] = [{ role: 'assistant', content: 'ok' }];
const agents: AgentDefinition[] = [{ id: 'main', engine: () => Promise.resolve({ messages: reply }) }];
const keys = Array.from({ length: SESSIONS }, (_, i) => `agent:main:s${String(i)}`);
const message = signal(SignalKind.UserMessage, 'hello');

interface Opened {
  readonly runner: Runner;
  readonly inbox: SqliteInbox;
  readonly close: () => Promise<void>;
}

function open(path: string, worker: false | { leaseMs: number; pollMs: number }): Opened {
  const store = new SqliteCheckpointStore({ path });
  const inbox = new SqliteInbox({ path, pollMs: 100, maxPendingPerSession: 100_000 });
  const runner = createRunner({ store, inbox, worker, agents, maxHistoryMessages: 20 });
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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How long the accepts took, per round (printed: where the time goes). */
const acceptMs: number[] = [];
/**
 * The process's CPU time per settled signal, per round (printed): producer and worker share this
 * one thread, so 1e6 / this is the rate one idle core would reach; on a loaded machine the
 * wall-clock figure falls far below it, this one much less.
 */
const cpuUs: number[] = [];

/** One round of the throughput figure on a fresh file: signals settled per second. */
async function throughputRound(als: boolean): Promise<number> {
  const path = join(dir, `throughput-${String(files++)}.db`);
  const producer = open(path, false);
  const worker = open(path, { leaseMs: 30_000, pollMs: 100 });
  try {
    await (als ? inAls(() => worker.runner.start()) : worker.runner.start());
    const started = performance.now();
    const cpu = process.cpuUsage();
    const accept = (i: number): Promise<unknown> => producer.runner.accept(keys[i % SESSIONS] ?? '', message);
    const inFlight = new Set<Promise<unknown>>();
    for (let i = 0; i < SIGNALS; i++) {
      const p = accept(i).finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= WINDOW) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    acceptMs.push(performance.now() - started);
    while ((await producer.inbox.pending({ limit: 1 })).length > 0) await sleep(5);
    const used = process.cpuUsage(cpu);
    cpuUs.push((used.user + used.system) / SIGNALS);
    return SIGNALS / ((performance.now() - started) / 1000);
  } finally {
    await worker.close();
    await producer.close();
  }
}

const workerScript = fileURLToPath(new URL('./inbox-worker.ts', import.meta.url));

/** One round of the recovery figure: ms from the kill until another worker settled the entry. */
async function recoveryRound(): Promise<number> {
  const path = join(dir, `recovery-${String(files++)}.db`);
  const producer = open(path, false);
  const child = spawn(process.execPath, ['--import', 'tsx', workerScript, path], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const next = (type: string): Promise<void> =>
    new Promise((resolve, reject) => {
      child.on('message', (m) => {
        if ((m as { type?: string }).type === type) resolve();
      });
      child.once('exit', () => reject(new Error(`the bench worker exited before ${type}`)));
    });
  let rescuer: Opened | undefined;
  try {
    await next('ready');
    const receipt = await producer.runner.accept(keys[0] ?? '', message);
    await next('turn');
    child.kill('SIGKILL');
    const killed = performance.now();
    rescuer = open(path, { leaseMs: 2000, pollMs: 100 });
    await rescuer.runner.start();
    const outcome = await producer.runner.outcome(receipt.receiptId, { timeoutMs: 30_000 });
    if (outcome.status !== 'completed') throw new Error(`recovered entry ended ${outcome.status}`);
    return performance.now() - killed;
  } finally {
    child.kill('SIGKILL');
    await rescuer?.close();
    await producer.close();
  }
}

const plain: number[] = [];
const withAls: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  plain.push(await throughputRound(false));
  withAls.push(await throughputRound(true));
}
const recoveries: number[] = [];
for (let round = 0; round < ROUNDS; round++) recoveries.push(await recoveryRound());
rmSync(dir, { recursive: true, force: true });

console.log(`\nSQLite inbox on ${machine}:`);
console.log(
  `  accepted → settled, 1 worker: ${plain.map((r) => r.toFixed(0)).join(', ')} signals/s (median ${median(plain).toFixed(0)})`,
);
console.log(`  the same with an AsyncLocalStorage active: ${withAls.map((r) => r.toFixed(0)).join(', ')} signals/s`);
console.log(
  `  of which the ${String(SIGNALS)} accepts (${String(WINDOW)} in flight) took ${acceptMs.map((ms) => ms.toFixed(0)).join(', ')} ms; the worker settles while they run`,
);
console.log(
  `  CPU time per settled signal (accept, settle, outcome, ack; one thread): ${cpuUs.map((us) => us.toFixed(0)).join(', ')} µs ` +
    `(median ${median(cpuUs).toFixed(0)} µs: about ${(1e6 / median(cpuUs)).toFixed(0)}/s on one idle core; load average ${loadavg()[0]?.toFixed(1) ?? '?'})`,
);
console.log(
  `  recovery after kill -9 (leaseMs 2,000, pollMs 100): ${recoveries.map((r) => r.toFixed(0)).join(', ')} ms`,
);
const WORKLOAD = `store-sqlite inbox: ${String(SIGNALS)} signals over ${String(SESSIONS)} sessions, 1 worker`;
for (const [samples, mode] of [
  [plain, ''],
  [withAls, ALS],
] as const)
  figure({
    workload: WORKLOAD,
    name: `accepted → settled signals per second${mode}`,
    unit: '/s',
    samples,
    target: { atLeast: 5000 },
  });
figure({
  workload: 'store-sqlite inbox: recovery after kill -9, leaseMs 2,000',
  name: 'kill → entry settled by another worker (ms)',
  unit: 'ns',
  samples: recoveries.map((ms) => ms * 1e6),
  target: { atMost: 3000 * 1e6 },
});
