// `pnpm verify`: build, then two lanes side by side, because most steps use one core and the test
// suite spends much of its time waiting on child processes, PostgreSQL and the browser:
//
// - checks: typecheck, lint (prettier, cycles, jscpd, knip, eslint), the API site with its link
//   check, publint + attw; with `--ci` also the release rehearsal and the flagship example;
// - tests: the whole suite with coverage (its output is shown live).
//
// The checks lane's output is held and printed when the lane ends, so the two never interleave;
// every step's wall time is printed, and a failed step stops its lane (the other lane finishes,
// so one run reports every failure). Exit status 1 when any step failed.
//
// Usage: node scripts/verify.mjs [--ci] [--serial]
//   --ci      also `pnpm release:rehearse --skip-build` and the support desk example (what .ci/run adds)
//   --serial  one step at a time, every output live (for a machine that is already busy)
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
for (const a of args) {
  if (a !== '--ci' && a !== '--serial') {
    console.error(`verify: unknown argument ${a} (expected --ci or --serial)`);
    process.exit(2);
  }
}
const ci = args.includes('--ci');
const serial = args.includes('--serial');

/** A step: a label and the command line it runs (through the shell, from the repository root). */
const step = (label, command) => ({ label, command });

const checks = [
  step('typecheck', 'pnpm typecheck'),
  step('lint', 'pnpm lint'),
  step('API site', 'pnpm docs:api'),
  step('publint + attw', 'pnpm check:exports'),
  ...(ci
    ? [
        step('release rehearsal', 'pnpm release:rehearse --skip-build'),
        step('example', 'pnpm --filter @signalyard-examples/support-desk example'),
      ]
    : []),
];
const tests = [step('tests with coverage', 'pnpm test:coverage')];

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Runs one step; resolves with its exit status and, when `hold` is set, its output. */
function run({ command }, hold) {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const chunks = [];
    if (hold) {
      child.stdout.on('data', (c) => chunks.push(c));
      child.stderr.on('data', (c) => chunks.push(c));
    }
    child.on('error', (error) => resolve({ status: 1, output: `${error.message}\n` }));
    child.on('close', (code, signal) =>
      resolve({ status: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString('utf8') }),
    );
  });
}

/** Runs a lane's steps in order until one fails; returns its report lines and whether it passed. */
async function lane(name, steps, hold) {
  const report = [];
  for (const s of steps) {
    const started = performance.now();
    if (!hold) console.log(`\n::: ${s.label}: ${s.command}`);
    const { status, output } = await run(s, hold);
    const took = seconds(performance.now() - started);
    if (hold) process.stdout.write(`\n::: ${s.label}: ${s.command}\n${output}`);
    report.push(`${status === 0 ? 'ok    ' : 'FAILED'} ${s.label} (${took})`);
    if (status !== 0) return { name, report, passed: false };
  }
  return { name, report, passed: true };
}

const started = performance.now();
const build = await lane('build', [step('build', 'pnpm build')], false);
const lanes = !build.passed
  ? [build]
  : serial
    ? [build, await lane('checks', checks, false), await lane('tests', tests, false)]
    : [build, ...(await Promise.all([lane('checks', checks, true), lane('tests', tests, false)]))];

console.log(`\n::: verify ${serial ? '(serial)' : '(checks and tests side by side)'}`);
for (const l of lanes) for (const line of l.report) console.log(`  ${line}`);
const passed = lanes.every((l) => l.passed);
console.log(`::: verify ${passed ? 'passed' : 'FAILED'} in ${seconds(performance.now() - started)}`);
process.exit(passed ? 0 : 1);
