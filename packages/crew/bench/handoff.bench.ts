// CrewExecutor per-handoff overhead: two agents ping-ponging by signals for 100 handoffs with an
// instant scriptedModel (each reply resolves without a timer), next to the same 101 model calls
// made directly on the model (the floor: what the model itself costs), in one process run.
// `execute()` calls `generate`; `executeStream()` reads each call as a stream through core's
// `streamChat` (as the run does, with text_delta events and markers hidden), so its floor is the
// same 101 calls read through `streamChat`.
// Target (docs/crew.md): ≤ 5 µs per handoff of executor overhead. The OpenAI Agents SDK spends
// ≈ 250 µs per handoff with a fake model on the machines the target was set on (the reference
// of the ping-pong figures; the SDK itself is measured in the last section).
//
// Then a four-agent chain a -> b -> c -> d (issues 24 and 25), one whole run per call on a warm
// executor (as a Runner's crewEngine keeps one; a run on a new executor is shown beside it):
// - the marginal cost of a handoff: a run with k = 3 handoffs minus a run with k = 0 (the entry
//   agent answers without a marker), over 3, model calls included (target ≤ 2 µs);
// - what streaming adds per text delta: the same chain with 160-character replies, run by
//   executeStream() (every event read, markers hidden) minus execute(), over the number of
//   text_delta events the stream yields (target ≤ 1 µs per delta).
//
// Every figure is also measured with an AsyncLocalStorage active (rows and figures `…@als`,
// decisions-wave3 §6), and the chain's whole k = 3 run has a target of its own: ≤ 25 µs per run
// (`execute()`, scripted model, warm), in both modes.
//
// Last, handoffs as tool calls (issue 45): the same chain with k = 3 handoffs made by transfer
// tool calls (`handoff_mode: tool`) beside the marker run (target: within 1.2× of it), each also
// with an AsyncLocalStorage active around each call (rows `…@als`: real applications
// run with one, and it makes every await dearer), and against the OpenAI Agents SDK's handoffs
// (`@openai/agents`, a devDependency of this benchmark only) on the same chain — four agents,
// three `transfer_to_…` handoffs, a fake model implementing the SDK's `Model` interface, tracing
// off, no network.
import {
  Agent,
  Runner as AgentsRunner,
  Usage,
  setTracingDisabled,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents';
import { streamChat, type ChatMessage, type ChatRequest, type ChatResponse } from '@signalyard/core';
import { scriptedModel } from '@signalyard/core/testing';
import { CrewExecutor, resolveCrewConfig } from '@signalyard/crew';
import { described, difference, figure, measure, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { ALS, inAls, modes, withAls } from '../../../scripts/bench/modes.mjs';
import { explainIfMissed } from '../../../scripts/bench/profile.mjs';

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

// ---- The four-agent chain.
const CHAIN = ['a', 'b', 'c', 'd'] as const;
const chain = resolveCrewConfig({
  entryPoint: 'a',
  agents: CHAIN.map((id) => ({ id })),
  routing: {
    signals: {
      a: [{ signal: '[TO_B]', target: 'b' }],
      b: [{ signal: '[TO_C]', target: 'c' }],
      c: [{ signal: '[TO_D]', target: 'd' }],
    },
    // A reply without a marker ends the run (routing decides first).
    agentBehaviors: Object.fromEntries(CHAIN.map((id) => [id, { isTerminal: true }])),
  },
});
type Replies = Readonly<Record<string, { readonly content: string }>>;
const K3: Replies = {
  a: { content: 'over to b [TO_B]' },
  b: { content: 'over to c [TO_C]' },
  c: { content: 'over to d [TO_D]' },
  d: { content: 'done' },
};
const K0: Replies = { a: { content: 'done' } };
// 160 characters of prose per reply (10 deltas of the scripted model's default 16 characters),
// then the marker.
const PROSE = 'The order shipped on Monday and should arrive within three working days; tracking is '
  .repeat(2)
  .slice(0, 160);
const LONG: Replies = {
  a: { content: `${PROSE} [TO_B]` },
  b: { content: `${PROSE} [TO_C]` },
  c: { content: `${PROSE} [TO_D]` },
  d: { content: PROSE },
};
// A warm executor, as a Runner's crewEngine keeps one for all its turns: built once per replies
// and reused; its scripted model (which records every request) is replaced every 1,000 runs, so
// what it keeps stays bounded. Building an executor (compiling the crew) is measured on its own
// (`chainRunFresh`).
const RENEW_EVERY = 1000;
const warm = new Map<object, { executor: CrewExecutor; runs: number }>();
const executorFor = (
  replies: Readonly<Record<string, ChatResponse>>,
  crewConfig: ReturnType<typeof resolveCrewConfig> = chain,
): CrewExecutor => {
  let entry = warm.get(replies);
  if (entry === undefined || entry.runs >= RENEW_EVERY) {
    const model = scriptedModel((r) => replies[r.agentId as string]!);
    entry = { executor: new CrewExecutor({ crew: crewConfig, model }), runs: 0 };
    warm.set(replies, entry);
  }
  entry.runs++;
  return entry.executor;
};
const chainRun = async (replies: Replies): Promise<number> => (await executorFor(replies).execute('start')).handoffs;
const chainRunFresh = async (replies: Replies): Promise<number> => {
  const executor = new CrewExecutor({ crew: chain, model: scriptedModel((r) => replies[r.agentId as string]!) });
  return (await executor.execute('start')).handoffs;
};
const chainStream = async (replies: Replies): Promise<number> => {
  let deltas = 0;
  for await (const event of executorFor(replies).executeStream('start')) if (event.type === 'text_delta') deltas++;
  return deltas;
};
// The chain does what the figures claim.
if ((await chainRun(K3)) !== 3 || (await chainRun(K0)) !== 0 || (await chainRun(LONG)) !== 3)
  throw new Error('unexpected chain run');
const DELTAS = await chainStream(LONG);
{
  const executor = new CrewExecutor({ crew: chain, model: scriptedModel((r) => LONG[r.agentId as string]!) });
  let text = '';
  for await (const event of executor.executeStream('start')) {
    if (event.type === 'text_delta') text += event.delta;
    if (event.type === 'end' && (event.response.handoffs !== 3 || !text.endsWith(PROSE)))
      throw new Error('unexpected streamed chain run');
  }
  if (text.includes('[TO_') || DELTAS < 40) throw new Error(`unexpected deltas: ${DELTAS}`);
}

let sink = 0;
const results = await measure(
  withAls([
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
  ]),
);
printTable(`@signalyard/crew: ${HANDOFFS}-handoff ping-pong, instant scriptedModel (per handoff)`, results);

const chainResults = await measure(
  withAls([
    {
      name: 'chain, k = 0 handoffs: execute()',
      batch: 1,
      fn: async () => {
        sink += await chainRun(K0);
      },
    },
    {
      name: 'chain, k = 3 handoffs: execute()',
      batch: 1,
      fn: async () => {
        sink += await chainRun(K3);
      },
    },
    {
      name: 'chain, k = 3 handoffs: new executor + execute()',
      batch: 1,
      fn: async () => {
        sink += await chainRunFresh(K3);
      },
    },
    {
      name: 'chain, 160-char replies: execute()',
      batch: 1,
      fn: async () => {
        sink += await chainRun(LONG);
      },
    },
    {
      name: 'chain, 160-char replies: executeStream()',
      batch: 1,
      fn: async () => {
        sink += await chainStream(LONG);
      },
    },
  ]),
);
printTable('@signalyard/crew: a -> b -> c -> d chain, instant scriptedModel (per run)', chainResults);
const reference = `OpenAI Agents SDK ≈ ${OPENAI_AGENTS_US} µs (reference; measured on the chain below)`;
for (const [[floorR, streamedFloorR, exec, stream], mode] of modes(results)) {
  figure({
    workload: WORKLOAD,
    name: `execute() overhead per handoff (minus model calls)${mode}`,
    unit: 'ns',
    samples: difference(exec!, floorR!),
    target: { atMost: TARGET_US * 1000 },
    against: reference,
  });
  figure({
    workload: WORKLOAD,
    name: `executeStream() overhead per handoff (minus streamed model calls)${mode}`,
    unit: 'ns',
    samples: difference(stream!, streamedFloorR!),
    target: { atMost: TARGET_US * 1000 },
    against: reference,
  });
  figure({
    workload: WORKLOAD,
    name: `execute() per handoff, model calls included${mode}`,
    unit: 'ns',
    samples: exec!.samples,
  });
  figure({
    workload: WORKLOAD,
    name: `executeStream() per handoff, streamed model calls included${mode}`,
    unit: 'ns',
    samples: stream!.samples,
  });
}
const CHAIN_WORKLOAD = 'crew: a -> b -> c -> d chain, instant model';
for (const [[k0, k3, fresh, plain, streamed], mode] of modes(chainResults)) {
  // A figure out of reach is shown with where the time goes, in its mode.
  const inMode = <T>(fn: () => T): (() => T) => (mode === ALS ? () => inAls(fn) : fn);
  const run = figure({
    workload: CHAIN_WORKLOAD,
    name: `crew run with 3 handoffs: execute(), warm executor${mode}`,
    unit: 'ns',
    samples: k3!.samples,
    target: { atMost: 25_000 },
    against: `${described(k0!, 'run with k = 0')}, ${described(fresh!, 'new executor per run')}`,
  });
  await explainIfMissed(
    run,
    inMode(() => chainRun(K3)),
  );
  const marginal = figure({
    workload: CHAIN_WORKLOAD,
    name: `marginal cost per handoff: (k = 3 − k = 0) / 3${mode}`,
    unit: 'ns',
    samples: difference(k3!, k0!).map((ns) => ns / 3),
    target: { atMost: 2000 },
    against: `${described(k0!, 'run with k = 0')}, ${described(k3!, 'k = 3')}`,
  });
  if (run.met)
    await explainIfMissed(
      marginal,
      inMode(() => chainRun(K3)),
    );
  const streaming = figure({
    workload: CHAIN_WORKLOAD,
    name: `streaming per text delta: (executeStream − execute) / ${DELTAS}${mode}`,
    unit: 'ns',
    samples: difference(streamed!, plain!).map((ns) => ns / DELTAS),
    target: { atMost: 1000 },
    against: `${described(plain!, 'execute()')}, ${described(streamed!, 'executeStream()')}`,
  });
  await explainIfMissed(
    streaming,
    inMode(() => chainStream(LONG)),
  );
}

// ---- Handoffs as tool calls: the chain in tool mode, with and without an AsyncLocalStorage,
// and the OpenAI Agents SDK on the same chain.
const toolChain = resolveCrewConfig({ ...chain, settings: { ...chain.settings, handoffMode: 'tool' } });
const transfer = (content: string, to: string): ChatResponse => ({
  content,
  toolCalls: [{ id: `call-${to}`, name: `transfer_to_${to}`, arguments: {} }],
});
const TOOL_K3: Readonly<Record<string, ChatResponse>> = {
  a: transfer('over to b', 'b'),
  b: transfer('over to c', 'c'),
  c: transfer('over to d', 'd'),
  d: { content: 'done' },
};
const toolChainRun = async (): Promise<number> => (await executorFor(TOOL_K3, toolChain).execute('start')).handoffs;

// The SDK's chain: a -> b -> c -> d, each handing off with the SDK's own `transfer_to_<name>`
// tool; d answers. The fake model answers from the agent's instructions (its name), at once.
setTracingDisabled(true);
const NEXT: Readonly<Record<string, string | undefined>> = { a: 'b', b: 'c', c: 'd', d: undefined };
class FakeModel implements Model {
  getResponse(request: ModelRequest): Promise<ModelResponse> {
    const name = String(request.systemInstructions);
    const to = NEXT[name];
    return Promise.resolve({
      usage: new Usage(),
      output:
        to === undefined
          ? [
              {
                type: 'message',
                role: 'assistant',
                status: 'completed',
                content: [{ type: 'output_text', text: 'done' }],
              },
            ]
          : [
              {
                type: 'function_call',
                callId: `call-${to}`,
                name: `transfer_to_${to}`,
                arguments: '{}',
                status: 'completed',
              },
            ],
    });
  }
  // eslint-disable-next-line require-yield -- the benchmark never streams through the SDK
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the benchmark does not stream through the SDK');
  }
}
const fake = new FakeModel();
const agentD = new Agent({ name: 'd', instructions: 'd', model: fake });
const agentC = new Agent({ name: 'c', instructions: 'c', model: fake, handoffs: [agentD] });
const agentB = new Agent({ name: 'b', instructions: 'b', model: fake, handoffs: [agentC] });
const agentA = new Agent({ name: 'a', instructions: 'a', model: fake, handoffs: [agentB] });
const agentsRunner = new AgentsRunner({ tracingDisabled: true });
const agentsRun = async (): Promise<number> => {
  const result = await agentsRunner.run(agentA, 'start');
  return result.newItems.filter((item) => item.type === 'handoff_output_item').length;
};

// Each run does what the figures claim.
if ((await toolChainRun()) !== 3) throw new Error('unexpected tool-mode chain run');
if ((await agentsRun()) !== 3) throw new Error('unexpected OpenAI Agents SDK run');
{
  const result = await agentsRunner.run(agentA, 'start');
  if (result.lastAgent?.name !== 'd' || result.finalOutput !== 'done') throw new Error('unexpected SDK result');
}

const modeTasks = () => [
  {
    name: 'chain, k = 3, markers: execute()',
    batch: 1,
    fn: async () => {
      sink += await chainRun(K3);
    },
  },
  {
    name: 'chain, k = 3, transfer tools: execute()',
    batch: 1,
    fn: async () => {
      sink += await toolChainRun();
    },
  },
  {
    name: 'chain, k = 3, OpenAI Agents SDK handoffs',
    batch: 1,
    fn: async () => {
      sink += await agentsRun();
    },
  },
];
const modeResults = await measure(withAls(modeTasks()));
printTable(
  '@signalyard/crew: 3 handoffs by marker, by transfer tool, and with the OpenAI Agents SDK (per run)',
  modeResults,
);
const MODES_WORKLOAD = 'crew: a -> b -> c -> d, 3 handoffs, instant model';
for (const [[marker, tool, agents], suffix] of modes(modeResults)) {
  figure({
    workload: MODES_WORKLOAD,
    name: `transfer tools vs markers: k = 3 run${suffix}`,
    unit: 'x',
    samples: ratio(tool!, marker!),
    target: { atMost: 1.2 },
    against: `${described(marker!, 'markers')}, ${described(tool!, 'transfer tools')}`,
  });
  figure({
    workload: MODES_WORKLOAD,
    name: `OpenAI Agents SDK vs transfer tools: k = 3 run${suffix}`,
    unit: 'x',
    samples: ratio(agents!, tool!),
    against: `${described(agents!, 'OpenAI Agents SDK 0.20.0, fake model')}, ${described(tool!, 'transfer tools')}`,
  });
}
if (sink < 0) console.log(sink);
