// Both modes of an async figure: as measured, and with an AsyncLocalStorage active (decisions-wave3
// §6). Real applications run with one (OpenTelemetry's context manager, web frameworks), and an
// active store makes every await and promise hop dearer, so a figure that holds only without one
// says little. `withAls(tasks)` gives each task an `…@als` twin that runs the same call inside
// `als.run(store, …)` — as a context manager runs a request's work — measured in the same rounds
// as the plain task, so drift hits both alike; `modes(results)` splits the results again.
//
// An AsyncLocalStorage that has run once keeps Node's promise hooks on for the whole process
// (until `disable()`), so after the first `@als` round every plain round would pay for them too.
// `leaveAls()` turns them off again: `measure` calls it after each task's round and the profiler
// after each profile, so plain rows are plain. Libraries benchmarked beside Signalyard keep
// process-wide storages of their own (LangGraph.js through @langchain/core, the OpenAI Agents
// SDK) and run every call in them: during their own calls that is their cost, but left on it
// would slow every task measured after their first call, so `leaveAls()` turns those off too
// (their next call turns them on again).
import { AsyncLocalStorage } from 'node:async_hooks';

/** The suffix of a figure or task measured with an AsyncLocalStorage active. */
export const ALS = '@als';

const als = new AsyncLocalStorage();
// What a tracing context manager keeps: a context object with the active span.
const STORE = Object.freeze({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' });

/** Runs `fn` with the benchmarks' AsyncLocalStorage active (a store set), returning what it returns. */
export function inAls(fn) {
  return als.run(STORE, fn);
}

/**
 * Turns the benchmarks' AsyncLocalStorage off, and the benchmarked libraries' own (Node's
 * promise hooks with them, when nothing else keeps them on); the next `inAls` (or library call)
 * turns it on again. Call it only when no `inAls` call is in
 * flight (between rounds).
 */
export function leaveAls() {
  als.disable();
  for (const key of LIBRARY_STORAGES) {
    const storage = globalThis[key];
    if (storage instanceof AsyncLocalStorage) storage.disable();
  }
}

/** Where the benchmarked libraries keep their process-wide AsyncLocalStorage. */
const LIBRARY_STORAGES = [
  Symbol.for('ls:tracing_async_local_storage'), // @langchain/core (LangGraph.js)
  Symbol.for('openai.agents.core.asyncLocalStorage'), // @openai/agents-core
];

/** `tasks`, then each again named `<name>@als`, its `fn` called inside `als.run(store, fn)`. */
export function withAls(tasks) {
  return [...tasks, ...tasks.map((task) => ({ ...task, name: `${task.name}${ALS}`, fn: () => inAls(task.fn) }))];
}

/**
 * Splits the results of `measure(withAls(tasks))` into `[[plain, ''], [als, '@als']]`, each in the
 * order of `tasks`, so a benchmark records every figure once per mode with the suffix in its name.
 */
export function modes(results) {
  if (results.length % 2 !== 0) throw new Error(`modes: expected the results of withAls(tasks), got ${results.length}`);
  const half = results.length / 2;
  return [
    [results.slice(0, half), ''],
    [results.slice(half), ALS],
  ];
}
