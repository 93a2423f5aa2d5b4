// Measures tasks as repeated samples: each round measures every task once, in order, so drift
// (another process taking the CPU, a GC) hits the tasks of one round alike, and the samples of
// two tasks taken in the same round can be divided into a per-round ratio.
import { Bench } from 'tinybench';
import { leaveAls } from './modes.mjs';
import { median } from './stats.mjs';

/** Every figure rests on at least this many samples, so its spread means something. */
export const MIN_ROUNDS = 5;

/** A task's first calls (JIT tiers, inline caches) are never part of its figure: at least this many warm it up first. */
const WARMUP_CALLS = 1000;

/**
 * Measures each task `rounds` times. A task's `fn` does `batch` operations per call. By default
 * a round runs tinybench on the task for `time` ms (after `warmupTime` ms; the first round warms
 * up longer, and for at least WARMUP_CALLS calls, so a task's first thousand calls are never
 * measured) and takes the median call; a task with `once: true` (a call that takes long, like
 * a LangGraph.js run) is called once per round and timed directly, after one warm-up call.
 * Before the first round and after each task's round, `leaveAls()` turns off every
 * AsyncLocalStorage a round (or a benchmark's checks before it) left on, so no task pays for
 * another's promise hooks.
 * Returns, per task in the given order, `{ name, batch, samples, nsPerOp, opsPerSec }`:
 * `samples` are ns per operation, one per round in round order; `nsPerOp` is their median.
 */
export async function measure(tasks, { rounds = MIN_ROUNDS, time = 300, warmupTime = 100 } = {}) {
  if (!Number.isInteger(rounds) || rounds < MIN_ROUNDS) {
    throw new Error(`measure: rounds must be an integer >= ${MIN_ROUNDS}, got ${JSON.stringify(rounds)}`);
  }
  const samples = tasks.map(() => []);
  leaveAls();
  for (const task of tasks) {
    if (!task.once) continue;
    await task.fn();
    leaveAls();
  }
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < tasks.length; i++) {
      const task = tasks[i];
      samples[i].push(
        task.once
          ? await timeOnce(task)
          : await timeWithTinybench(task, time, round === 0 ? 3 * warmupTime : warmupTime, round === 0),
      );
      // An `@als` round leaves no promise hooks on behind it for the next (plain) task's round.
      leaveAls();
    }
  }
  return tasks.map((task, i) => {
    const nsPerOp = median(samples[i]);
    return { name: task.name, batch: task.batch, samples: samples[i], nsPerOp, opsPerSec: 1e9 / nsPerOp };
  });
}

async function timeOnce(task) {
  const started = performance.now();
  await task.fn();
  return ((performance.now() - started) * 1e6) / task.batch;
}

async function timeWithTinybench(task, time, warmupTime, first) {
  // tinybench warms up until both warmupTime and warmupIterations are reached.
  const bench = new Bench({ time, warmupTime, warmupIterations: first ? WARMUP_CALLS : 16, throws: true });
  bench.add(task.name, task.fn);
  await bench.run();
  const result = bench.tasks[0].result;
  if (!result || !('latency' in result)) throw new Error(`benchmark ${task.name} produced no result`);
  return (result.latency.p50 * 1e6) / task.batch;
}
