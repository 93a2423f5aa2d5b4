// `pnpm bench`: builds the packages, then runs each package's benchmarks
// (packages/*/bench/*.bench.ts, through tsx, one process per file so JIT state does not leak
// between packages; benchmarks import the built packages, as users do). Each file records its
// figures (scripts/bench/figures.mjs) in a results file of its own; at the end this prints one
// summary table of every figure: median, spread over the rounds, target, what it is compared
// with, and whether it met the target. A missed target is reported, not an error; a benchmark
// that crashes fails the run.
//
// `pnpm bench` runs everything; `pnpm bench fsm router` only those packages (or files whose name
// starts with the word) and builds only them and their dependencies.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESULTS_ENV } from './bench/figures.mjs';
import { formatResult, formatSpread, formatTarget, formatValue, renderTable } from './bench/format.mjs';

const only = process.argv.slice(2);
// `{./packages/x}...` is the package in that folder and its dependencies; without the braces pnpm
// reads `./packages/x...` as a folder glob and builds only x (whose types then lack its deps' dist).
const buildArgs =
  only.length === 0 ? ['build'] : [...only.flatMap((o) => ['--filter', `{./packages/${o}}...`]), 'run', 'build'];
const build = spawnSync('pnpm', buildArgs, { stdio: ['ignore', 'ignore', 'inherit'] });
if (build.status !== 0) {
  console.error(`pnpm ${buildArgs.join(' ')} failed (exit ${build.status})`);
  process.exit(build.status ?? 1);
}

const files = [];
for (const pkg of readdirSync('packages').sort()) {
  const dir = join('packages', pkg, 'bench');
  if (!existsSync(dir)) continue;
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.bench.ts')) continue;
    if (only.length > 0 && !only.some((o) => pkg === o || f.startsWith(o))) continue;
    files.push(join(dir, f));
  }
}
if (files.length === 0) {
  console.error(`no benchmark matches ${only.join(' ')} (packages/<name>/bench/*.bench.ts)`);
  process.exit(1);
}

const machine = () => `${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores)`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(`# Signalyard benchmarks: Node ${process.version}, ${machine()}, ${new Date().toISOString()}`);
console.log(`load average at start: ${load()}`);

const resultsDir = mkdtempSync(join(tmpdir(), 'signalyard-bench-'));
const figures = [];
const crashed = [];
const started = performance.now();
try {
  files.forEach((file, i) => {
    const results = join(resultsDir, `${i}.jsonl`);
    const run = spawnSync('pnpm', ['exec', 'tsx', file], {
      stdio: 'inherit',
      env: { ...process.env, [RESULTS_ENV]: results },
    });
    if (existsSync(results)) {
      for (const line of readFileSync(results, 'utf8').split('\n')) {
        if (line !== '') figures.push({ file, ...JSON.parse(line) });
      }
    }
    if (run.status !== 0) crashed.push(`${file} (${run.signal ?? `exit ${run.status}`})`);
  });
} finally {
  rmSync(resultsDir, { recursive: true, force: true });
}

const rounds = new Set(figures.map((f) => f.samples.length));
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
console.log(`\n# Summary: ${plural(figures.length, 'figure')} from ${plural(files.length, 'benchmark file')}`);
console.log(
  `Medians of ${[...rounds].join(' or ')} rounds; the spread is the lowest and highest round. ` +
    `A result like "met (4/5 samples)" means one round missed the target: noise, unless it repeats.\n`,
);
console.log(
  renderTable(
    ['workload', 'figure', 'median', 'spread (min – max)', 'target', 'floor or peer', 'result'],
    figures.map((f, i) => [
      i > 0 && figures[i - 1].workload === f.workload ? '' : f.workload,
      f.name,
      formatValue(f.value, f.unit),
      formatSpread(f, f.unit),
      formatTarget(f.target, f.unit),
      f.against,
      formatResult(f),
    ]),
  ),
);
const targets = figures.filter((f) => f.target !== undefined);
const missed = targets.filter((f) => !f.met);
console.log(
  `\n${targets.length - missed.length} of ${targets.length} targets met` +
    (missed.length > 0 ? `; not met: ${missed.map((f) => `${f.workload} / ${f.name}`).join('; ')}` : '') +
    `. ${Math.round((performance.now() - started) / 1000)} s; load average at the end: ${load()} on ${machine()}, Node ${process.version}.`,
);
// decisions-wave3 §6: a target holds only when it holds in both modes, without and with an
// AsyncLocalStorage active (figures named `…@als`).
const inMode = (als) => targets.filter((f) => f.name.endsWith('@als') === als);
const tally = (list) => `${list.filter((f) => f.met).length} of ${list.length} met`;
const alsTargets = inMode(true);
console.log(
  `By mode: without an AsyncLocalStorage ${tally(inMode(false))}; with one active (@als) ${tally(alsTargets)}` +
    (alsTargets.length === 0 ? ' (no @als figure in this run)' : '') +
    '. The machine may be shared: a figure within 10 % of its target on one noisy run says little; compare medians of several runs.',
);
if (crashed.length > 0) {
  console.error(`\nbenchmarks that crashed (their figures are missing above): ${crashed.join(', ')}`);
  process.exit(1);
}
