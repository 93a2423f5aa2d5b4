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
if (existsSync(out)) {
  const report = JSON.parse(readFileSync(out, 'utf8'));
  passed = report.numPassedTests ?? 0;
  failed = (report.numFailedTests ?? 0) + (report.numRuntimeErrorTests ?? 0);
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  rmSync(out, { force: true });
} else {
  failed = 1;
}
const status = run.status ?? 1;
console.log(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
if (status !== 0 && failed === 0) {
  console.log(
    `vitest exited with status ${status} although no test failed (coverage thresholds, or an error outside tests): see above`,
  );
}
process.exit(status !== 0 ? status : failed > 0 ? 1 : 0);
