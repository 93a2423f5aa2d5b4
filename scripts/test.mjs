// Runs every vitest project and ends with one plain summary line, `N passed, N failed`
// (plus `, N skipped` when any were), so people and CI read the result the same way.
// Usage: node scripts/test.mjs [--coverage] [extra vitest args]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const coverage = args.includes('--coverage');
const rest = args.filter((a) => a !== '--coverage');
const out = join(tmpdir(), `signalyard-vitest-${process.pid}.json`);

const vitestArgs = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`];
if (coverage) vitestArgs.push('--coverage');
const run = spawnSync('pnpm', ['exec', ...vitestArgs, ...rest], { stdio: 'inherit' });

let passed = 0;
let failed = 0;
let skipped = 0;
let failures = [];
if (existsSync(out)) {
  const report = JSON.parse(readFileSync(out, 'utf8'));
  passed = report.numPassedTests ?? 0;
  failed = (report.numFailedTests ?? 0) + (report.numRuntimeErrorTests ?? 0);
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  failures = failuresOf(report);
  rmSync(out, { force: true });
} else {
  failed = 1;
}
const status = run.status ?? 1;
console.log(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
// The failing tests again, last, with the start of their message: a log cut to its tail (as CI
// reports show it) still names what failed.
for (const line of failures) console.log(line);
if (status !== 0 && failed === 0) {
  console.log(
    `vitest exited with status ${status} although no test failed (coverage thresholds, or an error outside tests): see above`,
  );
}
process.exit(status !== 0 ? status : failed > 0 ? 1 : 0);

/** One line per failed test (or failed file), `FAILED <file> > <name>: <message start>`. */
function failuresOf(report) {
  const root = process.cwd() + '/';
  const lines = [];
  for (const file of report.testResults ?? []) {
    const name = String(file.name ?? '').replace(root, '');
    const failedTests = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failedTests) {
      lines.push(`FAILED ${name} > ${t.fullName ?? t.title}: ${firstLines(t.failureMessages?.[0])}`);
    }
    if (failedTests.length === 0 && file.status === 'failed') {
      lines.push(`FAILED ${name}: ${firstLines(file.message)}`);
    }
  }
  return lines;
}

function firstLines(text) {
  return String(text ?? '')
    .split('\n')
    .slice(0, 3)
    .join(' | ')
    .slice(0, 400);
}
