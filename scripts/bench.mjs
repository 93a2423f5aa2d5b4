// `pnpm bench`: builds every package, then runs each package's benchmarks
// (packages/*/bench/*.bench.ts, through tsx, one process per file so JIT state does not leak
// between packages). Benchmarks import the built packages, as users do.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

// `pnpm bench` builds and runs everything; `pnpm bench fsm router` only those packages (and
// builds only them and their dependencies).
const only = process.argv.slice(2);
const buildArgs =
  only.length === 0 ? ['build'] : [...only.flatMap((o) => ['--filter', `./packages/${o}...`]), 'run', 'build'];
const build = spawnSync('pnpm', buildArgs, { stdio: ['ignore', 'ignore', 'inherit'] });
if (build.status !== 0) process.exit(build.status ?? 1);

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
console.log(`# Signalyard benchmarks (Node ${process.version}, ${new Date().toISOString()})`);
let failed = false;
for (const file of files) {
  const run = spawnSync('pnpm', ['exec', 'tsx', file], { stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`benchmark ${file} failed (exit ${run.status})`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
