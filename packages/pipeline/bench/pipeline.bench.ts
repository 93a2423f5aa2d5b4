// The A -> B -> C -> A loop of trivial synchronous stages for GRAPH_LOOP_N loops (shared
// workloads.mjs: 3 x N stage executions per run), on PipelineRuntime, on LangGraph.js (a
// StateGraph with the same three nodes and a conditional edge) and on the bare-await floor
// (`asyncLoop` in floor.mjs), in one process run.
// Contract (design/pipeline.md): per-stage overhead at least 20x lower than LangGraph.js; aim <= 2 us per stage.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { definePipeline, PipelineRuntime } from '@signalyard/pipeline';
import { loadShared, measure, printRatio, printTable } from '../../../scripts/bench-harness.mjs';

const W = await loadShared('workloads.mjs');
const F = await loadShared('floor.mjs');
const N = W.GRAPH_LOOP_N as number;
const STEPS = 3 * N;
const asyncLoop = F.asyncLoop as (n: number) => Promise<{ count: number }>;

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
]);

// LangGraph.js takes about a second per 3,000-step run: tinybench's 64-iteration minimum would
// take minutes, so it is timed directly (one warm-up run, then the median of five).
const samples: number[] = [];
await graph.invoke({ count: 0, fieldB: 0, fieldC: 0 }, { recursionLimit });
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  const s = await graph.invoke({ count: 0, fieldB: 0, fieldC: 0 }, { recursionLimit });
  samples.push(performance.now() - t0);
  sink += s.count;
}
samples.sort((x, y) => x - y);
const lgNs = ((samples[2] as number) * 1e6) / STEPS;
results.push({ name: 'LangGraph.js StateGraph.invoke', nsPerOp: lgNs, opsPerSec: 1e9 / lgNs });

printTable(
  `@signalyard/pipeline: A -> B -> C -> A loop, ${N.toLocaleString('en-US')} loops (${STEPS.toLocaleString('en-US')} stages per run; ns per stage)`,
  results,
);
const [floor, ours, langgraph] = results as [
  (typeof results)[number],
  (typeof results)[number],
  (typeof results)[number],
];
console.log('');
console.log(
  `per stage: floor ${(floor.nsPerOp / 1000).toFixed(3)} us, PipelineRuntime ${(ours.nsPerOp / 1000).toFixed(3)} us, LangGraph.js ${(langgraph.nsPerOp / 1000).toFixed(1)} us`,
);
printRatio('LangGraph.js per stage / PipelineRuntime per stage', langgraph.nsPerOp / ours.nsPerOp, 20, 'min');
console.log(
  `PipelineRuntime per stage: ${(ours.nsPerOp / 1000).toFixed(3)} us (aim <= 2 us): ${ours.nsPerOp <= 2000 ? 'MET' : 'NOT MET'}`,
);
console.log(
  `PipelineRuntime per stage / bare-await floor: ${(ours.nsPerOp / floor.nsPerOp).toFixed(1)}x (for scale; no target)`,
);
if (sink < 0) console.log(sink);
