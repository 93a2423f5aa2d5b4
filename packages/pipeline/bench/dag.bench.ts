// The DAG workload (scripts/bench/workloads.mjs, GRAPH_DAG_N): A -> {B1, B2, B3} (parallel) -> C, looping
// C -> A while count < N, with trivial synchronous stages: 5 stage executions per loop, 5N per
// run. On PipelineRuntime in DAG mode, on LangGraph.js (a StateGraph with the same five nodes,
// `addEdge(['B1', 'B2', 'B3'], 'C')` as the join and a conditional edge C -> A | END) and on the
// bare-await floor (`asyncLoop` in scripts/bench/floor.mjs), in one process run.
//
// How the loop is modelled: DAG mode runs each stage at most once per run (a DAG has no cycles),
// so one loop iteration is one `run(count, { mode: 'parallel' })` of the five-stage DAG, and the
// driver loops while C's output says so, feeding A's count into the next run. Every per-run cost
// (a new envelope, its id, the final freeze) is therefore paid once per 5 stages and included.
// Target (docs/pipeline.md): per-stage overhead at least 20x lower than LangGraph.js.
// The floor and PipelineRuntime are also measured with an AsyncLocalStorage active (rows and
// figure `…@als`, decisions-wave3 §6), as real applications run them.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { definePipeline, PipelineRuntime, type RunOptions } from '@signalyard/pipeline';
import { asyncLoop } from '../../../scripts/bench/floor.mjs';
import { described, figure, measure, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { ALS, inAls } from '../../../scripts/bench/modes.mjs';
import { GRAPH_DAG_N as N } from '../../../scripts/bench/workloads.mjs';

const STAGES_PER_LOOP = 5;
const STEPS = STAGES_PER_LOOP * N;
const WORKLOAD = `pipeline DAG: A -> {B1, B2, B3} -> C loop, ${STEPS.toLocaleString('en-US')} stages`;

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
  {
    name: `floor: bare \`s = await node(s)\` loop${ALS}`,
    batch: STEPS,
    fn: () =>
      inAls(async () => {
        sink += (await asyncLoop(STEPS)).count;
      }),
  },
  {
    name: `PipelineRuntime.run (mode 'parallel')${ALS}`,
    batch: STEPS,
    fn: () =>
      inAls(async () => {
        sink += await dagLoop();
      }),
  },
  {
    // A good fraction of a second per run: each round times one run (as in pipeline.bench.ts).
    name: 'LangGraph.js StateGraph.invoke',
    batch: STEPS,
    once: true,
    fn: async () => {
      sink += (await graph.invoke(initial, { recursionLimit })).count;
    },
  },
]);
printTable(
  `@signalyard/pipeline DAG mode: A -> {B1, B2, B3} -> C, looping ${N.toLocaleString('en-US')} times (${STEPS.toLocaleString('en-US')} stages per run; per stage)`,
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
figure({
  workload: WORKLOAD,
  name: 'PipelineRuntime (DAG) per stage',
  unit: 'ns',
  samples: ours!.samples,
  against: described(floor!, 'floor: bare await loop'),
});
figure({
  workload: WORKLOAD,
  name: `PipelineRuntime (DAG) per stage${ALS}`,
  unit: 'ns',
  samples: alsOurs!.samples,
  against: described(alsFloor!, `floor: bare await loop${ALS}`),
});
if (sink < 0) console.log(sink);
