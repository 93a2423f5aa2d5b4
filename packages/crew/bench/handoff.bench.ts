// CrewExecutor per-handoff overhead: two agents ping-ponging by signals for 100 handoffs with an
// instant scriptedModel (each reply resolves without a timer), next to the same 101 model calls
// made directly on the model (the floor: what the model itself costs), in one process run.
// Contract (design/crew.md): ≤ 5 µs per handoff of executor overhead. The OpenAI Agents SDK
// spends ≈ 250 µs per handoff with a fake model on these machines (figure from the contract; the
// SDK is not installed here, so it is not measured).
import type { ChatMessage, ChatRequest } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, resolveCrewConfig } from '@signalyard/crew';
import { measure, printTable } from '../../../scripts/bench-harness.mjs';

const HANDOFFS = 100;
const CALLS = HANDOFFS + 1; // the 101st reply asks for a handoff that max_handoffs refuses
const TARGET_US = 5;
const OPENAI_AGENTS_US = 250;

const crew = resolveCrewConfig({
  entryPoint: 'ping',
  agents: [{ id: 'ping' }, { id: 'pong' }],
  settings: { maxHandoffs: HANDOFFS + 1, maxRounds: CALLS },
  routing: {
    signals: {
      ping: [{ signal: '[TO_PONG]', target: 'pong' }],
      pong: [{ signal: '[TO_PING]', target: 'ping' }],
    },
  },
});
const PING = { content: 'ping back [TO_PONG]' };
const PONG = { content: 'pong back [TO_PING]' };
const reply = (request: ChatRequest) => (request.agentId === 'ping' ? PING : PONG);

// A fresh model per run: scriptedModel records every call, and an executor is bound to its model.
const run = async (): Promise<number> => {
  const executor = new CrewExecutor({ crew, model: scriptedModel(reply) });
  const response = await executor.execute('start');
  return response.handoffs;
};

// The run does what the figure claims, or the figure means nothing.
{
  const executor = new CrewExecutor({ crew, model: scriptedModel(reply) });
  const response = await executor.execute('start');
  if (
    response.handoffs !== HANDOFFS ||
    response.reason !== 'max_handoffs' ||
    response.state.history.length !== CALLS + 1
  ) {
    throw new Error(
      `unexpected run: ${JSON.stringify({ handoffs: response.handoffs, reason: response.reason, history: response.state.history.length })}`,
    );
  }
  let events = 0;
  for await (const _ of executor.executeStream('start')) events++;
  if (events === 0) throw new Error('no events');
}

// The floor: the same 101 calls on a fresh scripted model, with a growing history as the run has.
const floor = async (): Promise<number> => {
  const model = scriptedModel(reply);
  const history: ChatMessage[] = [{ role: 'user', content: 'start' }];
  const abortSignal = new AbortController().signal;
  for (let i = 0; i < CALLS; i++) {
    const agentId = i % 2 === 0 ? 'ping' : 'pong';
    const r = await model.generate({ messages: history.slice(), agentId, abortSignal });
    history.push({ role: 'assistant', content: r.content, name: agentId });
  }
  return history.length;
};

let sink = 0;
const results = await measure([
  {
    name: `floor: ${CALLS} scriptedModel calls`,
    batch: HANDOFFS,
    fn: async () => {
      sink += await floor();
    },
  },
  {
    name: `execute(): ${HANDOFFS}-handoff ping-pong`,
    batch: HANDOFFS,
    fn: async () => {
      sink += await run();
    },
  },
  {
    name: `executeStream(): ${HANDOFFS}-handoff ping-pong`,
    batch: HANDOFFS,
    fn: async () => {
      const executor = new CrewExecutor({ crew, model: scriptedModel(reply) });
      for await (const _ of executor.executeStream('start')) sink++;
    },
  },
]);
printTable(`@signalyard/crew: ${HANDOFFS}-handoff ping-pong, instant scriptedModel (ns per handoff)`, results);
const [floorR, exec, stream] = results;
console.log('');
const line = (label: string, us: number): void => {
  const ok = us <= TARGET_US;
  console.log(
    `${label.padEnd(52)}${`${us.toFixed(2)} µs`.padStart(10)}   target <= ${TARGET_US} µs   ${ok ? 'MET' : 'NOT MET'}`,
  );
};
line('execute() overhead per handoff (minus model calls)', (exec!.nsPerOp - floorR!.nsPerOp) / 1000);
line('executeStream() overhead per handoff', (stream!.nsPerOp - floorR!.nsPerOp) / 1000);
console.log(
  `${'execute() total per handoff, model included'.padEnd(52)}${`${(exec!.nsPerOp / 1000).toFixed(2)} µs`.padStart(10)}`,
);
console.log(
  `OpenAI Agents SDK, fake model (contract figure, not measured here: not installed): ≈ ${OPENAI_AGENTS_US} µs per handoff` +
    ` → executor overhead ≈ ${(OPENAI_AGENTS_US / Math.max((exec!.nsPerOp - floorR!.nsPerOp) / 1000, 0.001)).toFixed(0)}× less`,
);
if (sink < 0) console.log(sink);
