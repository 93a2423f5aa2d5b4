// Shared benchmark harness: loads the shared workloads and floors (../shared/bench beside the
// repository, or $SIGNALYARD_SHARED_BENCH), measures batched tasks with tinybench, and prints
// a table with ns/op, ops/s and the ratios each contract names.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The folder holding the shared workloads.mjs and floor.mjs. */
export function sharedBenchDir() {
  const candidates = [process.env.SIGNALYARD_SHARED_BENCH, join(repoRoot, '..', 'shared', 'bench')].filter(Boolean);
  for (const dir of candidates) if (existsSync(join(dir, 'workloads.mjs'))) return dir;
  throw new Error(
    `Shared benchmark inputs not found (looked in ${candidates.join(', ')}). ` +
      'Put the shared/ folder beside the repository or set SIGNALYARD_SHARED_BENCH.',
  );
}

/** Imports ../shared/bench/<name> (workloads.mjs or floor.mjs). */
export async function loadShared(name) {
  return import(pathToFileURL(join(sharedBenchDir(), name)).href);
}

/**
 * Measures each task: `fn` does `batch` operations per call. Tasks are measured in interleaved
 * rounds (so drift affects them alike) and the median per-batch latency of all rounds is used.
 * Returns { name, nsPerOp, opsPerSec } per task, in the given order.
 */
export async function measure(tasks, { rounds = 3, time = 400, warmupTime = 150 } = {}) {
  const perTask = tasks.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < tasks.length; i++) {
      const task = tasks[i];
      const bench = new Bench({ time, warmupTime, throws: true });
      bench.add(task.name, task.fn);
      await bench.run();
      const result = bench.tasks[0].result;
      if (!result || !('latency' in result)) throw new Error(`benchmark ${task.name} produced no result`);
      perTask[i].push((result.latency.p50 * 1e6) / task.batch);
    }
  }
  return tasks.map((task, i) => {
    const sorted = perTask[i].sort((a, b) => a - b);
    const nsPerOp = sorted[Math.floor(sorted.length / 2)];
    return { name: task.name, nsPerOp, opsPerSec: 1e9 / nsPerOp };
  });
}

const fmt = (n, digits = 1) => (n >= 100 ? n.toFixed(0) : n.toFixed(digits));
const pad = (s, n) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s, n) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

/** Prints a result table. */
export function printTable(title, results) {
  console.log(`\n## ${title}\n`);
  const w = Math.max(28, ...results.map((r) => r.name.length + 2));
  console.log(`${pad('task', w)}${lpad('ns/op', 12)}${lpad('ops/s', 16)}`);
  for (const r of results) {
    console.log(
      `${pad(r.name, w)}${lpad(fmt(r.nsPerOp), 12)}${lpad(Math.round(r.opsPerSec).toLocaleString('en-US'), 16)}`,
    );
  }
}

/**
 * Prints one ratio line and whether it meets its target. `kind` is 'max' (ratio must be at
 * most target, e.g. "within 2x of the floor") or 'min' (at least target, e.g. "10x faster").
 */
export function printRatio(label, ratio, target, kind) {
  const ok = kind === 'max' ? ratio <= target : ratio >= target;
  const want = kind === 'max' ? `<= ${target}x` : `>= ${target}x`;
  console.log(`${pad(label, 52)}${lpad(`${ratio.toFixed(2)}x`, 10)}   target ${want}   ${ok ? 'MET' : 'NOT MET'}`);
  return ok;
}
