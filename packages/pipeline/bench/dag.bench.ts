// The shared DAG workload (workloads.mjs, GRAPH_DAG_N): A -> {B1, B2, B3} (parallel) -> C, looping
// C -> A while count < N, with trivial synchronous stages: 5 stage executions per loop, 5N per
// run. On PipelineRuntime in DAG mode, on LangGraph.js (a StateGraph with the same five nodes,
// `addEdge(['B1', 'B2', 'B3'], 'C')` as the join and a conditional edge C -> A | END) and on the
// bare-await floor (`asyncLoop` in floor.mjs), in one process run.
//
// How the loop is modelled: DAG mode runs each stage at most once per run (a DAG has no cycles),
// so one loop iteration is one `run(count, { mode: 'parallel' })` of the five-stage DAG, and the
// driver loops while C's output says so, feeding A's count into the next run. Every per-run cost
// (a new envelope, its id, the final freeze) is therefore paid once per 5 stages and included.
// Contract (design/pipeline.md): per-stage overhead at least 20x lower than LangGraph.js.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { definePipeline, PipelineRuntime, type RunOptions } from '@signalyard/pipeline';
import { loadShared, measure, printRatio, printTable } from '../../../scripts/bench-harness.mjs';

const W = await loadShared('workloads.mjs');
const F = await loadShared('floor.mjs');
const N = W.GRAPH_DAG_N as number;
const STAGES_PER_LOOP = 5;
const STEPS = STAGES_PER_LOOP * N;
const asyncLoop = F.asyncLoop as (n: number) => Promise<{ count: number }>;

// ---- Signalyard: A counts (from the run's input), B1-B3 write one field each, C decides whether to loop.
interface CountOutput {
  count: number;
}
const pipeline = definePipeline({
  name: 'dag-loop',
  stages: [
    { name: 'a', run: (ctx) => ({ count: (ctx.input as number) + 1 }) },
    { name: 'b1', requires: ['a'], run: () => ({ b: 1 }) },
    { name: 'b2', requires: ['a'], run: () => ({ b: 2 }) },
    { name: 'b3', requires: ['a'], run: () => ({ b: 3 }) },
    { name: 'c', requires: ['b1', 'b2', 'b3'], run: (ctx) => ({ loop: (ctx.outputs.a as CountOutput).count < N }) },
  ],
});
const runtime = new PipelineRuntime(pipeline);
const DAG: RunOptions = { mode: 'parallel' };

/** Runs the DAG until C stops the loop; returns the number of stage executions. */
async function dagLoop(): Promise<number> {
  let count = 0;
  let stages = 0;
  for (;;) {
    const env = await runtime.run(count, DAG);
    if (env.terminalReason !== 'completed')
      throw new Error(`pipeline: ${env.terminalReason ?? 'not terminated'} (${env.terminationReason ?? ''})`);
    stages += env.agentHops;
    count = (env.outputs.a as CountOutput).count;
    if (!(env.outputs.c as { loop: boolean }).loop) return stages;
  }
}

// ---- LangGraph.js: the same five nodes, the fan-out, the join and the conditional edge.
const State = Annotation.Root({
  count: Annotation<number>(),
  fieldB1: Annotation<number>(),
  fieldB2: Annotation<number>(),
  fieldB3: Annotation<number>(),
  fieldC: Annotation<number>(),
});
const graph = new StateGraph(State)
  .addNode('A', (s: typeof State.State) => ({ count: s.count + 1 }))
  .addNode('B1', () => ({ fieldB1: 1 }))
  .addNode('B2', () => ({ fieldB2: 2 }))
  .addNode('B3', () => ({ fieldB3: 3 }))
  .addNode('C', () => ({ fieldC: 1 }))
  .addEdge(START, 'A')
  .addEdge('A', 'B1')
  .addEdge('A', 'B2')
  .addEdge('A', 'B3')
  .addEdge(['B1', 'B2', 'B3'], 'C')
  .addConditionalEdges('C', (s: typeof State.State) => (s.count < N ? 'A' : END), ['A', END])
  .compile();
const recursionLimit = STEPS + 10;
const initial = { count: 0, fieldB1: 0, fieldB2: 0, fieldB3: 0, fieldC: 0 };

// Same work, or the figures mean nothing.
if ((await dagLoop()) !== STEPS) throw new Error(`pipeline: expected ${STEPS} stage executions`);
const lg = await graph.invoke(initial, { recursionLimit });
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
    name: "PipelineRuntime.run (mode 'parallel')",
    batch: STEPS,
    fn: async () => {
      sink += await dagLoop();
    },
  },
]);

// LangGraph.js takes a good fraction of a second per run: timed directly (one warm-up run, then
// the median of five), as in pipeline.bench.ts.
const samples: number[] = [];
await graph.invoke(initial, { recursionLimit });
for (let i = 0; i < 5; i++) {
  const t0 = performance.now();
  const s = await graph.invoke(initial, { recursionLimit });
  samples.push(performance.now() - t0);
  sink += s.count;
}
samples.sort((x, y) => x - y);
const lgNs = ((samples[2] as number) * 1e6) / STEPS;
results.push({ name: 'LangGraph.js StateGraph.invoke', nsPerOp: lgNs, opsPerSec: 1e9 / lgNs });

printTable(
  `@signalyard/pipeline DAG mode: A -> {B1, B2, B3} -> C, looping ${N.toLocaleString('en-US')} times (${STEPS.toLocaleString('en-US')} stages per run; ns per stage)`,
  results,
);
const [floor, ours, langgraph] = results as [
  (typeof results)[number],
  (typeof results)[number],
  (typeof results)[number],
];
console.log('');
console.log(
  `per stage: floor ${(floor.nsPerOp / 1000).toFixed(3)} us, PipelineRuntime (DAG) ${(ours.nsPerOp / 1000).toFixed(3)} us, LangGraph.js ${(langgraph.nsPerOp / 1000).toFixed(1)} us`,
);
console.log(
  `per DAG pass (5 stages): PipelineRuntime ${((ours.nsPerOp * STAGES_PER_LOOP) / 1000).toFixed(2)} us, LangGraph.js ${((langgraph.nsPerOp * STAGES_PER_LOOP) / 1000).toFixed(1)} us`,
);
printRatio('LangGraph.js per stage / PipelineRuntime (DAG) per stage', langgraph.nsPerOp / ours.nsPerOp, 20, 'min');
console.log(
  `PipelineRuntime (DAG) per stage / bare-await floor: ${(ours.nsPerOp / floor.nsPerOp).toFixed(1)}x (for scale; no target)`,
);
if (sink < 0) console.log(sink);
