// Figures: the numbers a benchmark reports against a target, in one format. Each figure is
// printed where it is measured and, when `pnpm bench` runs the file, also appended as one JSON
// line to the results file named by SIGNALYARD_BENCH_RESULTS, from which scripts/bench.mjs
// prints the summary table of the whole run.
import { appendFileSync } from 'node:fs';
import { formatResult, formatSpread, formatTarget, formatValue } from './format.mjs';
import { meets, median, range } from './stats.mjs';
import { MIN_ROUNDS } from './measure.mjs';

/** The environment variable naming the results file (JSON lines) `pnpm bench` collects. */
export const RESULTS_ENV = 'SIGNALYARD_BENCH_RESULTS';

const UNITS = ['ns', 'x', '/s'];

/**
 * Records one figure and prints it. `samples` hold one value per round (at least 5); the
 * figure's value is their median, and `target` ({ atMost } or { atLeast }, in the figure's
 * unit) is judged on it. `against` names what it is compared with: the floor or the peer and
 * its measured value (or where a reference figure comes from). Returns the recorded figure.
 */
export function figure({ workload, name, unit, samples, target, against = '' }) {
  if (!UNITS.includes(unit)) throw new Error(`figure ${name}: unit must be one of ${UNITS.join(', ')}, got ${unit}`);
  if (!Array.isArray(samples) || samples.length < MIN_ROUNDS || !samples.every(Number.isFinite)) {
    throw new Error(`figure ${name}: expected at least ${MIN_ROUNDS} finite samples, got ${JSON.stringify(samples)}`);
  }
  const value = median(samples);
  const record = {
    workload,
    name,
    unit,
    value,
    ...range(samples),
    samples,
    target,
    against,
    met: meets(value, target),
    samplesMet: samples.filter((s) => meets(s, target)).length,
  };
  console.log(
    `${name.padEnd(56)} ${formatValue(value, unit).padStart(12)}   [${formatSpread(record, unit)}]` +
      (target === undefined ? '' : `   target ${formatTarget(target, unit)}   ${formatResult(record)}`),
  );
  const file = process.env[RESULTS_ENV];
  if (file) appendFileSync(file, `${JSON.stringify(record)}\n`);
  return record;
}

/** Per-round `a / b` of two measured tasks (or sample lists) taken in the same rounds. */
export function ratio(a, b) {
  return zip(a, b, (x, y) => x / y);
}

/** Per-round `a - b` of two measured tasks (or sample lists) taken in the same rounds. */
export function difference(a, b) {
  return zip(a, b, (x, y) => x - y);
}

/** Per-round operations per second of a measured task (its samples are ns per operation). */
export function perSecond(a) {
  return samplesOf(a).map((ns) => 1e9 / ns);
}

/**
 * `label median` of a measured task, for a figure's `against`: `floor: 20 × includes 0.48 µs`
 * (unit 'ns', the default) or `memory store 108,000/s` (unit '/s').
 */
export function described(task, label = task.name, unit = 'ns') {
  return `${label} ${formatValue(unit === '/s' ? task.opsPerSec : task.nsPerOp, unit)}`;
}

const samplesOf = (x) => (Array.isArray(x) ? x : x.samples);
function zip(a, b, f) {
  const xs = samplesOf(a);
  const ys = samplesOf(b);
  if (xs.length !== ys.length) throw new Error(`cannot pair ${xs.length} samples with ${ys.length}`);
  return xs.map((x, i) => f(x, ys[i]));
}
