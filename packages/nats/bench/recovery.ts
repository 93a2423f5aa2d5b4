// inbox.bench.ts's recovery figure: one round on a fresh stream. A worker process
// (recovery-worker.ts) takes a session's entry and hangs in its turn; a second worker (a Runner
// in this process) is running already; the first is killed with SIGKILL, and the round measures
// the time from the kill until the second settled the entry (its outcome is `completed`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SignalKind, signal } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { createRunner, type Runner } from 'signalyard';

const workerScript = fileURLToPath(new URL('./recovery-worker.ts', import.meta.url));
const LEASE_MS = 2000;
const POLL_MS = 100;

/** A Runner over the round's stream and table, with what it opened. */
function open(
  servers: string,
  stream: string,
  url: string,
  table: string,
  worker: boolean,
): Runner & { done(): Promise<void> } {
  const inbox = new JetStreamInbox({ servers, stream, leaseMs: LEASE_MS, pollMs: POLL_MS });
  const store = new PostgresCheckpointStore({ connectionString: url, table, maxConnections: 2 });
  const runner = createRunner({
    store,
    inbox,
    worker: worker ? { id: `rescuer-${randomBytes(3).toString('hex')}`, leaseMs: LEASE_MS, pollMs: POLL_MS } : false,
    agents: [{ id: 'main', engine: () => Promise.resolve({ output: 'done' }) }],
  });
  return Object.assign(runner, {
    done: async () => {
      await runner.close();
      await inbox.close();
      await store.close();
    },
  });
}

/** One round: ms from the kill until another worker settled the entry. */
export async function recoveryRound(o: {
  servers: string;
  url: string;
  table: string;
  round: number;
}): Promise<number> {
  const stream = `REC_${randomBytes(4).toString('hex')}`;
  const setup = new JetStreamInbox({ servers: o.servers, stream, leaseMs: LEASE_MS });
  await setup.provision();
  await setup.close();
  const store = new PostgresCheckpointStore({ connectionString: o.url, table: o.table, maxConnections: 1 });
  await store.migrate();
  await store.close();
  const producer = open(o.servers, stream, o.url, o.table, false);
  await producer.start();
  const child = spawn(process.execPath, ['--import', 'tsx', workerScript, o.servers, stream, o.url, o.table], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const next = (type: string): Promise<void> =>
    new Promise((resolve, reject) => {
      child.on('message', (m) => {
        if ((m as { type?: string }).type === type) resolve();
      });
      child.once('exit', () => reject(new Error(`the bench worker exited before ${type}`)));
    });
  let rescuer: (Runner & { done(): Promise<void> }) | undefined;
  try {
    const ready = next('ready');
    const turn = next('turn');
    await ready;
    const receipt = await producer.accept(`agent:main:r${String(o.round)}`, signal(SignalKind.UserMessage, 'go'));
    await turn;
    rescuer = open(o.servers, stream, o.url, o.table, true);
    await rescuer.start();
    child.kill('SIGKILL');
    const killed = performance.now();
    const outcome = await producer.outcome(receipt.receiptId, { timeoutMs: 60_000 });
    if (outcome.status !== 'completed') throw new Error(`the recovered entry ended ${outcome.status}`);
    return performance.now() - killed;
  } finally {
    child.kill('SIGKILL');
    await rescuer?.done();
    await producer.done();
  }
}
