// The A -> B -> C -> A loop of trivial synchronous stages for GRAPH_LOOP_N loops
// (scripts/bench/workloads.mjs: 3 x N stage executions per run), on PipelineRuntime, on
// LangGraph.js (a StateGraph with the same three nodes and a conditional edge) and on the
// bare-await floor (`asyncLoop` in scripts/bench/floor.mjs), in one process run.
// Targets (docs/pipeline.md, issue 24): per-stage overhead at least 20x lower than LangGraph.js, and
// at most 1.5 us per stage (printed next to the bare-await floor). The floor and the runtime are
// also measured with an AsyncLocalStorage active (`…@als`, decisions-wave3 §6): the per-stage
// target holds in both modes (LangGraph.js, the peer, is compared without one). A figure out of
// reach is followed by a CPU profile of it.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { definePipeline, PipelineRuntime } from '@signalyard/pipeline';
import { asyncLoop } from '../../../scripts/bench/floor.mjs';
import { described, figure, measure, median, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { ALS, inAls } from '../../../scripts/bench/modes.mjs';
import { explainIfMissed } from '../../../scripts/bench/profile.mjs';
import { GRAPH_LOOP_N as N } from '../../../scripts/bench/workloads.mjs';

const STEPS = 3 * N;
const WORKLOAD = `pipeline: A -> B -> C loop, ${STEPS.toLocaleString('en-US')} stages`;

// ---- Signalyard: A counts, B and C write one field each; C loops back to A while count < N.
interface CountOutput {
  count: number;
}
const pipeline = definePipeline({
  name: 'loop',
  maxIterations: N,
  maxAgentHops: STEPS,
  stages: [
    {
      name: 'a',
      run: (ctx) => ({ count: ((ctx.outputs.a as CountOutput | undefined)?.count ?? 0) + 1 }),
      defaultNext: 'b',
    },
    { name: 'b', run: () => ({ b: 1 }), defaultNext: 'c' },
    {
      name: 'c',
      run: (ctx) => ({ loop: (ctx.outputs.a as CountOutput).count < N }),
      routingRules: [{ condition: 'loop', value: true, target: 'a' }],
    },
  ],
});
const runtime = new PipelineRuntime(pipeline);

// ---- LangGraph.js: the same three nodes and conditional edge.
const State = Annotation.Root({
  count: Annotation<number>(),
  fieldB: Annotation<number>(),
  fieldC: Annotation<number>(),
});
const graph = new StateGraph(State)
  .addNode('a', (s: typeof State.State) => ({ count: s.count + 1 }))
  .addNode('b', () => ({ fieldB: 1 }))
  .addNode('c', () => ({ fieldC: 1 }))
  .addEdge(START, 'a')
  .addEdge('a', 'b')
  .addEdge('b', 'c')
  .addConditionalEdges('c', (s: typeof State.State) => (s.count < N ? 'a' : END), ['a', END])
  .compile();
const recursionLimit = STEPS + 10;

// Same work, or the figures mean nothing.
const env = await runtime.run(null);
if (env.terminalReason !== 'completed' || env.agentHops !== STEPS || (env.outputs.a as CountOutput).count !== N) {
  throw new Error(
    `pipeline: ${env.terminalReason ?? 'not terminated'} after ${env.agentHops} stages (${env.terminationReason ?? ''})`,
  );
}
const lg = await graph.invoke({ count: 0, fieldB: 0, fieldC: 0 }, { recursionLimit });
if (lg.count !== N) throw new Error(`langgraph: count ${lg.count}, expected ${N}`);
if ((await asyncLoop(STEPS)).count !== STEPS) throw new Error('floor: wrong count');

let sink = 0;
const initial = { count: 0, fieldB: 0, fieldC: 0 };
const results = await measure([
  {
    name: 'floor: bare `s = await node(s)` loop',
    batch: STEPS,
    fn: async () => {
      sink += (await asyncLoop(STEPS)).count;
    },
  },
  {
    name: 'PipelineRuntime.run (sequential)',
    batch: STEPS,
    fn: async () => {
      sink += (await runtime.run(null)).agentHops;
    },
  },
  {
    name: `floor: bare \`s = await node(s)\` loop${ALS}`,
    batch: STEPS,
    fn: () =>
      inAls(async () => {
        sink += (await asyncLoop(STEPS)).count;
      }),
  },
  {
    name: `PipelineRuntime.run (sequential)${ALS}`,
    batch: STEPS,
    fn: () =>
      inAls(async () => {
        sink += (await runtime.run(null)).agentHops;
      }),
  },
  {
    // About a second per 3,000-stage run: tinybench's minimum of 64 calls would take minutes,
    // so each round times one run.
    name: 'LangGraph.js StateGraph.invoke',
    batch: STEPS,
    once: true,
    fn: async () => {
      sink += (await graph.invoke(initial, { recursionLimit })).count;
    },
  },
]);
printTable(
  `@signalyard/pipeline: A -> B -> C -> A loop, ${N.toLocaleString('en-US')} loops (${STEPS.toLocaleString('en-US')} stages per run; per stage)`,
  results,
);
const [floor, ours, alsFloor, alsOurs, langgraph] = results;
figure({
  workload: WORKLOAD,
  name: 'LangGraph.js time / PipelineRuntime time, per stage',
  unit: 'x',
  samples: ratio(langgraph!, ours!),
  target: { atLeast: 20 },
  against: described(langgraph!, 'LangGraph.js'),
});
const perStage = figure({
  workload: WORKLOAD,
  name: 'PipelineRuntime per stage',
  unit: 'ns',
  samples: ours!.samples,
  target: { atMost: 1500 },
  against: described(floor!, 'floor: bare await loop'),
});
const perStageAls = figure({
  workload: WORKLOAD,
  name: `PipelineRuntime per stage${ALS}`,
  unit: 'ns',
  samples: alsOurs!.samples,
  target: { atMost: 1500 },
  against: described(alsFloor!, `floor: bare await loop${ALS}`),
});
// Out of reach: where the time goes, in the figure's mode.
const pipelineRun = async (): Promise<void> => void (sink += (await runtime.run(null)).agentHops);
await explainIfMissed(perStage, pipelineRun, { runs: 200 });
await explainIfMissed(perStageAls, () => inAls(pipelineRun), { runs: 200 });

// On a loaded machine (helpers share two cores at load 10–20) the wall-clock figures above are
// mostly scheduling: a 3,000-stage run spans several time slices. The process's CPU time per stage
// (process.cpuUsage, GC threads included), measured in alternating rounds, shows the runtime's own
// cost; information only, the target is judged on the wall-clock figure.
const cpuOf = async (fn: () => Promise<void>, calls: number): Promise<number> => {
  const started = process.cpuUsage();
  for (let i = 0; i < calls; i++) await fn();
  const used = process.cpuUsage(started);
  return ((used.user + used.system) * 1000) / (calls * STEPS);
};
const cpuFloor: number[] = [];
const cpuOurs: number[] = [];
for (let round = 0; round < 7; round++) {
  cpuFloor.push(await cpuOf(async () => void (sink += (await asyncLoop(STEPS)).count), 50));
  cpuOurs.push(await cpuOf(async () => void (sink += (await runtime.run(null)).agentHops), 20));
}
figure({
  workload: WORKLOAD,
  name: 'PipelineRuntime per stage, CPU time',
  unit: 'ns',
  samples: cpuOurs,
  against: `floor: bare await loop, CPU time ${Math.round(median(cpuFloor))} ns`,
});
if (sink < 0) console.log(sink);
