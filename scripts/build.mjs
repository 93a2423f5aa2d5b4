// `pnpm build`: every public package's JavaScript and declarations, both into its dist/.
//
// - JavaScript: each package's `build` script (tsup: esbuild, ESM, source maps; the inspector
//   also copies its diagram library), run by `pnpm -r` in dependency order.
// - Declarations: one `tsc -b tsconfig.build.json` over the packages' project references
//   (packages/*/tsconfig.build.json: src only, emitDeclarationOnly into dist). One compiler
//   process reads each package's sources once and each sibling's declarations from its output,
//   instead of a per-package declaration bundle that type-checked every dependency again.
//
// The two run side by side (they write different files: tsup's clean keeps `*.d.ts`). tsc's
// build info lives in node_modules/.cache/tsc-build: before the build, a package whose dist lacks
// a declaration its sources would produce (dist deleted by hand) has its build info dropped, so
// tsc writes them again, and declarations whose source file is gone are deleted.
//
// `pnpm build --js` or `--dts` builds only that half.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
for (const a of args) {
  if (a !== '--js' && a !== '--dts') {
    console.error(`build: unknown argument ${a} (expected --js or --dts)`);
    process.exit(2);
  }
}
const js = args.length === 0 || args.includes('--js');
const dts = args.length === 0 || args.includes('--dts');

/** The packages tsconfig.build.json references: `{ dir, buildInfo }`. */
function declarationProjects() {
  const solution = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8'));
  return solution.references.map(({ path }) => {
    const file = join(root, path);
    const config = JSON.parse(readFileSync(file, 'utf8'));
    const dir = dirname(file);
    return { dir, buildInfo: join(dir, config.compilerOptions.tsBuildInfoFile) };
  });
}

/** Every file under `dir` (relative paths), or none when it does not exist. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  const walk = (sub) => {
    for (const name of readdirSync(join(dir, sub))) {
      const rel = sub === '' ? name : `${sub}/${name}`;
      if (statSync(join(dir, rel)).isDirectory()) walk(rel);
      else out.push(rel);
    }
  };
  walk('');
  return out;
}

/** Makes dist/ and tsc's build info agree before `tsc -b` (which trusts its build info alone). */
function reconcileDeclarations() {
  for (const { dir, buildInfo } of declarationProjects()) {
    const expected = new Set(
      filesUnder(join(dir, 'src'))
        .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
        .map((f) => f.replace(/\.tsx?$/, '.d.ts')),
    );
    const present = new Set(filesUnder(join(dir, 'dist')).filter((f) => f.endsWith('.d.ts')));
    for (const f of present) {
      if (!expected.has(f)) rmSync(join(dir, 'dist', f)); // its source file was removed or renamed
    }
    if ([...expected].some((f) => !present.has(f)) && existsSync(buildInfo)) {
      console.log(`build: ${relative(root, dir)}/dist lacks declarations: writing them again`);
      rmSync(buildInfo);
    }
  }
}

/** Runs a command; resolves with its duration in seconds, rejects when it fails. */
function run(label, command, argv) {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, argv, { cwd: root, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolvePromise(`${label} ${((performance.now() - started) / 1000).toFixed(1)} s`);
      else reject(new Error(`${label}: ${command} ${argv.join(' ')} exited with ${code ?? signal}`));
    });
  });
}

const started = performance.now();
const jobs = [];
if (dts) {
  reconcileDeclarations();
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  jobs.push(run('declarations (tsc -b)', process.execPath, [tsc, '-b', 'tsconfig.build.json']));
}
if (js) {
  jobs.push(run('javascript (tsup)', 'pnpm', ['-r', '--filter', './packages/**', 'run', 'build:js']));
}
const results = await Promise.allSettled(jobs);
const failed = results.filter((r) => r.status === 'rejected');
for (const r of failed) console.error(`build failed: ${r.reason instanceof Error ? r.reason.message : r.reason}`);
if (failed.length > 0) process.exit(1);
const total = ((performance.now() - started) / 1000).toFixed(1);
console.log(`build: ${results.map((r) => r.value).join(', ')}; ${total} s in all`);
