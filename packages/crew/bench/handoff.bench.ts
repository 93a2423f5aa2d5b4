// CrewExecutor per-handoff overhead: two agents ping-ponging by signals for 100 handoffs with an
// instant scriptedModel (each reply resolves without a timer), next to the same 101 model calls
// made directly on the model (the floor: what the model itself costs), in one process run.
// `execute()` calls `generate`; `executeStream()` reads each call as a stream through core's
// `streamChat` (as the run does, with text_delta events and markers hidden), so its floor is the
// same 101 calls read through `streamChat`.
// Target (docs/crew.md): ≤ 5 µs per handoff of executor overhead. The OpenAI Agents SDK spends
// ≈ 250 µs per handoff with a fake model on the machines the target was set on; it is a
// reference figure, not measured here (the SDK is not a dependency of this benchmark).
import { streamChat, type ChatMessage, type ChatRequest } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, resolveCrewConfig } from '@signalyard/crew';
import { difference, figure, measure, printTable } from '../../../scripts/bench/harness.mjs';

const HANDOFFS = 100;
const CALLS = HANDOFFS + 1; // the 101st reply asks for a handoff that max_handoffs refuses
const TARGET_US = 5;
const OPENAI_AGENTS_US = 250;
const WORKLOAD = `crew: ${HANDOFFS}-handoff ping-pong, instant model`;

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

// The streamed floor: the same calls, each read to its end through streamChat.
const streamedFloor = async (): Promise<number> => {
  const model = scriptedModel(reply);
  const history: ChatMessage[] = [{ role: 'user', content: 'start' }];
  const abortSignal = new AbortController().signal;
  for (let i = 0; i < CALLS; i++) {
    const agentId = i % 2 === 0 ? 'ping' : 'pong';
    let content = '';
    for await (const part of streamChat(model, { messages: history.slice(), agentId, abortSignal })) {
      if (part.type === 'finish') content = part.response.content;
    }
    history.push({ role: 'assistant', content, name: agentId });
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
    name: `floor: ${CALLS} scriptedModel calls, streamed`,
    batch: HANDOFFS,
    fn: async () => {
      sink += await streamedFloor();
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
printTable(`@signalyard/crew: ${HANDOFFS}-handoff ping-pong, instant scriptedModel (per handoff)`, results);
const [floorR, streamedFloorR, exec, stream] = results;
const reference = `OpenAI Agents SDK ≈ ${OPENAI_AGENTS_US} µs (reference, not measured)`;
figure({
  workload: WORKLOAD,
  name: 'execute() overhead per handoff (minus model calls)',
  unit: 'ns',
  samples: difference(exec!, floorR!),
  target: { atMost: TARGET_US * 1000 },
  against: reference,
});
figure({
  workload: WORKLOAD,
  name: 'executeStream() overhead per handoff (minus streamed model calls)',
  unit: 'ns',
  samples: difference(stream!, streamedFloorR!),
  target: { atMost: TARGET_US * 1000 },
  against: reference,
});
figure({
  workload: WORKLOAD,
  name: 'execute() per handoff, model calls included',
  unit: 'ns',
  samples: exec!.samples,
});
figure({
  workload: WORKLOAD,
  name: 'executeStream() per handoff, streamed model calls included',
  unit: 'ns',
  samples: stream!.samples,
});
if (sink < 0) console.log(sink);
