// `pnpm smoke:pack`: installs the packages the way a user gets them, outside the workspace.
//
//  1. builds the packages (skip with --skip-build when they were just built);
//  2. packs every publishable package with `pnpm pack` (which rewrites `workspace:` ranges) and
//     checks each tarball: LICENSE (the repository's), README, package.json without `workspace:`
//     ranges, the built entry points and bins, no tests or benchmarks;
//  3. builds and packs a third-party plugin (scripts/pack-smoke/plugin) the way docs/plugins.md
//     says: its own package, `@signalyard/core` as a peer dependency, compiled with tsc, checked
//     with publint and attw;
//  4. installs all the tarballs with npm into a scratch app in a temporary folder outside the
//     workspace (scripts/pack-smoke/app), type-checks it under `strict` with `module: nodenext`
//     and with `moduleResolution: bundler`, checks the packages' .d.ts files with
//     `skipLibCheck` off, runs the app with node, and runs the installed `signalyard` command on
//     a valid and an invalid crew.yaml.
//
// Any failing step stops the run with exit 1, naming the step; the scratch folder is kept then
// (and with --keep) for a look. TypeScript is the workspace's pinned `typescript`.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(root, 'scripts', 'pack-smoke');
const args = new Set(process.argv.slice(2));
for (const a of args) {
  if (a !== '--skip-build' && a !== '--keep')
    fail('arguments', `unknown argument ${a} (expected --skip-build, --keep)`);
}
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const rootManifest = readJson(join(root, 'package.json'));
const license = readFileSync(join(root, 'LICENSE'), 'utf8');
// Node's types, at the version the workspace pins: the plugin and the app are Node code.
const nodeTypes = `@types/node@${rootManifest.devDependencies['@types/node']}`;

const work = mkdtempSync(join(tmpdir(), 'signalyard-pack-smoke-'));
const tarballs = join(work, 'tarballs');
mkdirSync(tarballs);
let current = 'setup';

try {
  if (!args.has('--skip-build')) step('build the packages', () => run('pnpm', ['build'], { cwd: root }));

  const packages = readdirSync(join(root, 'packages'))
    .sort()
    .map((name) => ({
      dir: join(root, 'packages', name),
      manifest: readJson(join(root, 'packages', name, 'package.json')),
    }))
    .filter((p) => p.manifest.private !== true);
  const versions = new Map(packages.map((p) => [p.manifest.name, p.manifest.version]));

  const packed = [];
  for (const pkg of packages) {
    step(`pack ${pkg.manifest.name}`, () => {
      const before = new Set(readdirSync(tarballs));
      run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: pkg.dir, quiet: true });
      const added = readdirSync(tarballs).filter((f) => !before.has(f));
      if (added.length !== 1) throw new Error(`expected one new tarball, found ${JSON.stringify(added)}`);
      packed.push({ ...pkg, tarball: join(tarballs, added[0]) });
    });
  }

  for (const pkg of packed) {
    step(`check the tarball of ${pkg.manifest.name}`, () => checkTarball(pkg, versions));
  }

  const plugin = join(work, 'plugin');
  step('build and pack the third-party plugin', () => {
    cpSync(join(fixtures, 'plugin'), plugin, { recursive: true });
    const core = packed.find((p) => p.manifest.name === '@signalyard/core');
    npm(['install', '--no-save', core.tarball, nodeTypes], plugin);
    run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: plugin });
    // The checks docs/plugins.md asks a plugin author to run, with the workspace's tools.
    run(join(root, 'node_modules', '.bin', 'publint'), ['--strict'], { cwd: plugin });
    run(join(root, 'node_modules', '.bin', 'attw'), ['--pack', '.', '--profile', 'esm-only'], { cwd: plugin });
    npm(['pack', '--pack-destination', tarballs], plugin, { quiet: true });
    const manifest = readJson(join(plugin, 'package.json'));
    const tarball = join(tarballs, `${manifest.name}-${manifest.version}.tgz`);
    const entries = tarEntries(tarball);
    for (const f of ['package/package.json', 'package/dist/index.js', 'package/dist/index.d.ts']) {
      if (!entries.includes(f)) throw new Error(`${tarball} lacks ${f}`);
    }
  });

  const app = join(work, 'app');
  step('install every tarball into a scratch app with npm', () => {
    cpSync(join(fixtures, 'app'), app, { recursive: true });
    const all = readdirSync(tarballs).map((f) => join(tarballs, f));
    npm(['install', ...all, nodeTypes], app);
  });
  step('type-check the app: strict, module nodenext', () =>
    run(process.execPath, [tsc, '-p', 'tsconfig.nodenext.json'], { cwd: app }),
  );
  step('type-check the app: strict, moduleResolution bundler', () =>
    run(process.execPath, [tsc, '-p', 'tsconfig.bundler.json'], { cwd: app }),
  );
  step("type-check the packages' declarations (skipLibCheck off)", () =>
    run(process.execPath, [tsc, '-p', 'tsconfig.declarations.json'], { cwd: app }),
  );
  step('run the app with node', () => run(process.execPath, ['dist/main.js'], { cwd: app }));

  const bin = join(app, 'node_modules', '.bin', 'signalyard');
  step('signalyard validate crew.yaml (the installed bin)', () => {
    const r = run(bin, ['validate', 'crew.yaml'], { cwd: app, quiet: true });
    process.stdout.write(r.stdout);
  });
  step('signalyard validate crew-invalid.yaml reports the problems (exit 1)', () => {
    const r = run(bin, ['validate', 'crew-invalid.yaml'], { cwd: app, quiet: true, expectStatus: 1 });
    const text = r.stdout + r.stderr;
    if (!/crew-invalid\.yaml:\d+: /.test(text)) throw new Error(`expected file:line problems, got:\n${text}`);
  });

  console.log(
    `\n::: pack smoke passed: ${packed.length} packages and a plugin installed and used outside the workspace`,
  );
  if (args.has('--keep')) console.log(`scratch folder kept: ${work}`);
  else rmSync(work, { recursive: true, force: true });
} catch (error) {
  fail(current, `${error instanceof Error ? error.message : String(error)}\nscratch folder kept: ${work}`);
}

function step(name, fn) {
  current = name;
  console.log(`\n::: ${name}`);
  fn();
}

function fail(stepName, message) {
  console.error(`\n::: pack smoke FAILED at step "${stepName}"\n${message}`);
  process.exit(1);
}

/** Runs a command; throws unless it exits with `expectStatus` (0). `quiet` captures its output. */
function run(command, argv, { cwd, quiet = false, expectStatus = 0 }) {
  const r = spawnSync(command, argv, {
    cwd,
    encoding: 'utf8',
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (r.error) throw r.error;
  if (r.status !== expectStatus) {
    const output = quiet ? `\n${r.stdout}${r.stderr}` : '';
    throw new Error(
      `${command} ${argv.join(' ')} exited with ${r.status ?? r.signal} (expected ${expectStatus})${output}`,
    );
  }
  return r;
}

function npm(argv, cwd, opts = {}) {
  return run('npm', [...argv, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, ...opts });
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

function tarEntries(tarball) {
  return run('tar', ['tzf', tarball], { cwd: work, quiet: true }).stdout.split('\n').filter(Boolean);
}

function tarFile(tarball, entry) {
  return run('tar', ['xzf', tarball, '-O', entry], { cwd: work, quiet: true }).stdout;
}

function checkTarball(pkg, versions) {
  const entries = tarEntries(pkg.tarball);
  const manifest = JSON.parse(tarFile(pkg.tarball, 'package/package.json'));
  const required = ['package/package.json', 'package/README.md', 'package/LICENSE'];
  for (const target of Object.values(pkg.manifest.bin ?? {})) required.push(join('package', target));
  for (const entry of Object.values(manifest.exports)) {
    if (typeof entry !== 'object') continue;
    required.push(join('package', entry.types), join('package', entry.default));
  }
  const missing = required.filter((f) => !entries.includes(f));
  if (missing.length > 0) throw new Error(`${pkg.tarball} lacks ${missing.join(', ')}`);
  const stray = entries.filter((f) => /^package\/(test|bench|node_modules)\//.test(f));
  if (stray.length > 0) throw new Error(`${pkg.tarball} ships ${stray.slice(0, 5).join(', ')}`);
  if (tarFile(pkg.tarball, 'package/LICENSE') !== license) {
    throw new Error(`${pkg.tarball}: package/LICENSE differs from the repository's LICENSE`);
  }
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (range.startsWith('workspace:')) throw new Error(`${pkg.tarball}: ${field}.${name} is still ${range}`);
      if (versions.has(name) && range !== `^${versions.get(name)}`) {
        throw new Error(`${pkg.tarball}: ${field}.${name} is ${range}, expected ^${versions.get(name)}`);
      }
    }
  }
  console.log(
    `${entries.length} files, LICENSE and README included, dependencies ${JSON.stringify(manifest.dependencies ?? {})}`,
  );
}
