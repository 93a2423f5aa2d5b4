// The per-delta cost of streaming a turn through a durable inbox's event channel (inbox.md
// "Streams from any worker"), next to the in-process stream: a turn whose engine emits 5,000 text
// deltas at once, read to its end with `runner.stream` — in process (no inbox), and by a producer
// runner (`worker: false`) while a worker runner over the same MemoryInbox applies it (the worker
// publishes every event, batched while a write is in flight; the producer reads the receipt's log).
// Time per delta, end to end; also with an AsyncLocalStorage active (`…@als`). No target: the
// network transports' latency is measured in store-postgres (streams.bench.ts).
import { MemoryCheckpointStore, MemoryInbox } from '@signalyard/core';
import { createRunner, type EngineFn, type Runner } from 'signalyard';
import { described, figure, measure, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { modes, withAls } from '../../../scripts/bench/modes.mjs';

const DELTAS = 5000;
const WORKLOAD = `signalyard: a turn of ${DELTAS.toLocaleString('en-US')} text deltas, streamed to its end`;

const engine: EngineFn = (ctx) => {
  for (let i = 0; i < DELTAS; i++) ctx.emitText('tok ');
  return Promise.resolve({ messages: [{ role: 'assistant', content: 'done' }] });
};

const local = createRunner({ agents: [{ id: 'main', engine }] });
const inbox = new MemoryInbox();
const store = new MemoryCheckpointStore();
const worker = createRunner({ agents: [{ id: 'main', engine }], inbox, store, worker: { pollMs: 50 } });
const producer = createRunner({ agents: [{ id: 'main', engine }], inbox, store, worker: false });

let turns = 0;
/** One turn, read to its end; checks every delta arrived. */
async function streamed(runner: Runner): Promise<void> {
  let deltas = 0;
  const turn = runner.stream({ channel: 'bench', text: 'go', peer: { kind: 'dm', id: `s${String(turns++ % 100)}` } });
  for await (const event of turn) if (event.type === 'text_delta') deltas++;
  if (deltas !== DELTAS) throw new Error(`expected ${String(DELTAS)} deltas, got ${String(deltas)}`);
}

const results = await measure(
  withAls([
    { name: 'in-process stream', batch: DELTAS, once: true, fn: () => streamed(local) },
    { name: 'producer stream through MemoryInbox', batch: DELTAS, once: true, fn: () => streamed(producer) },
  ]),
);
printTable(`${WORKLOAD} (per delta)`, results);
for (const [[inProcess, throughInbox], mode] of modes(results)) {
  figure({
    workload: WORKLOAD,
    name: `per delta through the inbox event channel${mode}`,
    unit: 'ns',
    samples: throughInbox!.samples,
    against: described(inProcess!, 'in-process stream'),
  });
  figure({
    workload: WORKLOAD,
    name: `inbox event channel / in-process stream${mode}`,
    unit: 'x',
    samples: ratio(throughInbox!, inProcess!),
  });
}
await Promise.all([local.close(), worker.close(), producer.close()]);
await inbox.close();
