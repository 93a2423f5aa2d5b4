// `pnpm release:rehearse`: a release, rehearsed end to end on a local npm registry, without
// touching the working tree. It
//
//  1. builds the packages (skip with --skip-build when they were just built);
//  2. copies the repository (tracked and untracked files, not ignored ones, plus the public
//     packages' dist/) into a scratch folder, and there versions the packages with the real
//     `changeset version` (pending changesets applied, CHANGELOG.md files written);
//  3. starts Verdaccio on 127.0.0.1 at a free port, its storage in the scratch folder
//     (scripts/release/registry.mjs);
//  4. publishes with `pnpm publish -r` from the copy, and checks the registry: every public
//     package (scripts/release/packages.mjs) at its new version, none of the others (a private
//     package published fails), no `workspace:` range left in a published manifest, and each
//     published tarball complete (scripts/release/tarball.mjs: a missing `files` entry fails);
//  5. builds a third-party plugin as docs/plugins.md says (scripts/release/plugin: its own
//     package, `@signalyard/core` as a peer, tsc, publint, attw) and publishes it there too;
//  6. in a fresh folder outside the workspace (scripts/release/app), runs `npm install
//     signalyard @signalyard/… signalyard-plugin-keyword-gate` against that registry; type-checks
//     the app under `strict` with `module: nodenext` and with `moduleResolution: bundler`, and the
//     packages' declarations with `skipLibCheck` off; runs the getting-started program exactly as
//     docs/getting-started.md has it (each `console.log` must print what its comment says); runs
//     the app (every package and the plugin at work, an MCP server over stdio among them: the
//     app's src/mcp-server.ts, called with connectMcp); runs the installed `signalyard` command.
//
// Any failing step stops the run with exit 1, naming the step; the scratch folder is kept then
// (and with --keep). `--break <fault>` rehearses a broken release instead: it makes one fault in
// the copy (private: @signalyard/test-utils loses "private": true; files: @signalyard/fsm's
// `files` loses "dist"; workspace-range: @signalyard/router is published with `npm publish`,
// which keeps `workspace:` ranges; snippet: the getting-started program's reason changes) and
// exits 0 only when the rehearsal fails at the step that must catch it.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PUBLIC_PACKAGES, publicPackages, readJson, workspacePackages } from './release/packages.mjs';
import { npmrc, registryRequest, startRegistry } from './release/registry.mjs';
import { currentStep, npm, run, step, stepAsync } from './release/steps.mjs';
import { checkTarball, manifestRangeProblems } from './release/tarball.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(root, 'scripts', 'release');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const PLUGIN = 'signalyard-plugin-keyword-gate';

/** Faults `--break` can make in the copy, and the step that must catch each. */
const FAULTS = {
  private: {
    caughtBy: 'the registry holds the public packages',
    make: (copy) => editJson(join(copy, 'packages', 'test-utils', 'package.json'), (m) => delete m.private),
  },
  files: {
    caughtBy: 'the published tarballs are complete',
    make: (copy) =>
      editJson(join(copy, 'packages', 'fsm', 'package.json'), (m) => (m.files = m.files.filter((f) => f !== 'dist'))),
  },
  'workspace-range': { caughtBy: 'the registry holds the public packages', make: () => undefined },
  snippet: {
    caughtBy: 'run the getting-started program',
    make: (copy) => {
      const file = join(copy, 'docs', 'getting-started.md');
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace("Action.reject('placing_order')", "Action.reject('busy')"),
      );
    },
  },
};

const argv = process.argv.slice(2);
const options = { build: true, keep: false, fault: undefined };
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--skip-build') options.build = false;
  else if (argv[i] === '--keep') options.keep = true;
  else if (argv[i] === '--break' && argv[i + 1] in FAULTS) options.fault = argv[++i];
  else {
    console.error(
      `release:rehearse: unknown argument ${argv[i]} (expected --skip-build, --keep, --break ${Object.keys(FAULTS).join('|')})`,
    );
    process.exit(2);
  }
}

const work = mkdtempSync(join(tmpdir(), 'signalyard-release-'));
const copy = join(work, 'repo');
let registry;
let failed = false;
try {
  await rehearse();
  console.log(
    `\n::: release rehearsal passed: ${PUBLIC_PACKAGES.length} packages published to a local registry, installed by name outside the workspace and used`,
  );
  if (options.fault !== undefined) {
    failed = true;
    console.error(`::: the fault "${options.fault}" was NOT caught: the rehearsal passed with it`);
    process.exitCode = 1;
  }
} catch (error) {
  failed = true;
  const cause = error instanceof Error && error.cause !== undefined ? `\n(cause: ${String(error.cause)})` : '';
  const message = `${error instanceof Error ? error.message : String(error)}${cause}`;
  const fault = options.fault === undefined ? undefined : FAULTS[options.fault];
  if (fault !== undefined && currentStep().startsWith(fault.caughtBy)) {
    failed = false;
    console.log(`\n::: the fault "${options.fault}" was caught at step "${currentStep()}":\n${message}`);
  } else {
    console.error(`\n::: release rehearsal FAILED at step "${currentStep()}"\n${message}`);
    if (registry !== undefined) console.error(`\nthe registry's log:\n${registry.log().slice(-4000)}`);
    process.exitCode = 1;
  }
} finally {
  await registry?.stop();
  if (failed || options.keep) console.log(`scratch folder kept: ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

async function rehearse() {
  const packages = step('the public packages', () => publicPackages(root));
  const before = workingTreeState();
  if (options.build) step('build the packages', () => run('pnpm', ['build'], { cwd: root }));

  step('copy the repository to a scratch folder', () => copyRepository(packages));
  if (options.fault !== undefined)
    step(`make the fault "${options.fault}" in the copy`, () => FAULTS[options.fault].make(copy));
  const versions = step('version the packages as changeset version does', () => versionCopy());

  registry = await stepAsync('start a local registry (Verdaccio)', () =>
    startRegistry({
      dir: join(work, 'registry'),
      localOnly: [...workspacePackages(root).map((p) => p.name), PLUGIN],
      cwd: root,
    }),
  );
  console.log(`${registry.url} (storage in ${join(work, 'registry')})`);
  // Every npm and pnpm below talks to this registry alone: its URL and token in a user config of
  // their own, which replaces ~/.npmrc, and the URL again in the environment.
  const userconfig = join(work, 'npmrc');
  writeFileSync(userconfig, npmrc(registry));
  process.env.npm_config_userconfig = userconfig;
  process.env.npm_config_registry = registry.url;

  step('publish the public packages: pnpm publish -r', () => {
    refusePublishConfig(workspacePackages(copy).map((p) => p.manifest));
    const to = ['--registry', registry.url];
    if (options.fault === 'workspace-range') npm(['publish', ...to], join(copy, 'packages', 'router'));
    run('pnpm', ['publish', '-r', '--no-git-checks', '--report-summary', ...to], { cwd: copy, quiet: true });
    const summary = readJson(join(copy, 'pnpm-publish-summary.json')).publishedPackages;
    console.log(summary.map((p) => `${p.name}@${p.version}`).join(', '));
  });
  const published = await stepAsync('the registry holds the public packages, and nothing else of the workspace', () =>
    checkRegistry(versions),
  );
  await stepAsync('the published tarballs are complete', () => checkTarballs(published, versions));

  step('build the third-party plugin and publish it', () => publishPlugin(versions.get('@signalyard/core')));
  const app = join(work, 'app');
  const install = [...PUBLIC_PACKAGES, PLUGIN, nodeTypes()];
  step(`in a fresh folder: npm install ${install.join(' ')}`, () => {
    cpSync(join(fixtures, 'app'), app, { recursive: true });
    writeFileSync(join(app, 'src', 'getting-started.ts'), gettingStarted().code);
    npm(['install', ...install], app);
  });
  useApp(app);
  step('the release bundle as docs/getting-started.md installs it: pnpm pack:public, then its npm install line', () =>
    installBundle(app),
  );

  step('the working tree is untouched', () => {
    const after = workingTreeState();
    if (after !== before) throw new Error(`git status before:\n${before}\nafter:\n${after}`);
  });
}

/** `git status` of the working tree, which the rehearsal must leave as it found it. */
function workingTreeState() {
  return execFileSync('git', ['status', '--porcelain=v1', '--untracked-files=all'], { cwd: root, encoding: 'utf8' });
}

function copyRepository(packages) {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f !== '' && existsSync(join(root, f)));
  for (const f of files) cpSync(join(root, f), join(copy, f), { recursive: true });
  for (const pkg of packages) {
    const dist = join(pkg.dir, 'dist');
    if (!existsSync(dist)) throw new Error(`${pkg.name} has no dist/: build first (pnpm build)`);
    cpSync(dist, join(copy, pkg.dir.slice(root.length + 1), 'dist'), { recursive: true });
  }
  console.log(`${files.length} files and the built dist/ folders in ${copy}`);
  // pnpm publish reads each package's links to resolve `workspace:` ranges; the store is warm.
  run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline', '--reporter=append-only'], {
    cwd: copy,
    quiet: true,
  });
}

/** Runs `changeset version` in the copy; returns name → new version of every public package. */
function versionCopy() {
  const changeset = join(copy, 'node_modules', '@changesets', 'cli', 'bin.js');
  run(process.execPath, [changeset, 'version'], { cwd: copy });
  const versions = new Map();
  const inCopy = workspacePackages(copy);
  for (const pkg of PUBLIC_PACKAGES.map((name) => inCopy.find((p) => p.name === name))) {
    const old = readJson(join(root, pkg.dir.slice(copy.length + 1), 'package.json')).version;
    versions.set(pkg.name, pkg.manifest.version);
    console.log(`${pkg.name}: ${old} → ${pkg.manifest.version}`);
  }
  return versions;
}

async function packument(name) {
  const response = await registryRequest(`${registry.url}${name.replace('/', '%2f')}`);
  if (response.status === 404) return undefined;
  if (response.status !== 200) throw new Error(`GET ${name} from the registry: ${response.status}`);
  return JSON.parse(response.body.toString('utf8'));
}

/** Checks what the registry holds; returns the published manifests of the public packages. */
async function checkRegistry(versions) {
  const summary = readJson(join(copy, 'pnpm-publish-summary.json')).publishedPackages.map((p) => p.name);
  const problems = [];
  const published = new Map();
  for (const { name } of workspacePackages(copy)) {
    const doc = await packument(name);
    if (!PUBLIC_PACKAGES.includes(name)) {
      if (doc !== undefined) problems.push(`${name} was published, but it is not a public package (private)`);
      continue;
    }
    const version = versions.get(name);
    const manifest = doc?.versions?.[version];
    if (manifest === undefined) {
      problems.push(`${name}@${version} is not in the registry`);
      continue;
    }
    if (doc['dist-tags']?.latest !== version) problems.push(`${name}: latest is ${doc['dist-tags']?.latest}`);
    for (const p of manifestRangeProblems(manifest, versions)) problems.push(`${name}@${version}: ${p}`);
    published.set(name, manifest);
  }
  const extra = summary.filter((name) => !PUBLIC_PACKAGES.includes(name));
  if (extra.length > 0) problems.push(`pnpm publish -r published ${extra.join(', ')}`);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  console.log(`${published.size} packages at their new versions; nothing else of the workspace`);
  return published;
}

async function checkTarballs(published, versions) {
  const dir = join(work, 'tarballs');
  mkdirSync(dir, { recursive: true });
  const sources = new Map(workspacePackages(copy).map((p) => [p.name, p.manifest]));
  for (const [name, manifest] of published) {
    const response = await registryRequest(manifest.dist.tarball);
    if (response.status !== 200) throw new Error(`GET ${manifest.dist.tarball}: ${response.status}`);
    const file = join(dir, `${name.replace('/', '-')}.tgz`);
    writeFileSync(file, response.body);
    console.log(checkTarball(file, sources.get(name), versions));
  }
}

/** Node's types at the version the workspace pins (the plugin and the app are Node code). */
function nodeTypes() {
  return `@types/node@${readJson(join(root, 'package.json')).devDependencies['@types/node']}`;
}

function publishPlugin(coreVersion) {
  const plugin = join(work, 'plugin');
  cpSync(join(fixtures, 'plugin'), plugin, { recursive: true });
  editJson(join(plugin, 'package.json'), (m) => (m.peerDependencies['@signalyard/core'] = `^${coreVersion}`));
  npm(['install', '--no-save', `@signalyard/core@${coreVersion}`, nodeTypes()], plugin);
  run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: plugin });
  // The checks docs/plugins.md asks a plugin author to run, with the workspace's tools.
  run(join(root, 'node_modules', '.bin', 'publint'), ['--strict'], { cwd: plugin, quiet: true });
  run(join(root, 'node_modules', '.bin', 'attw'), ['--pack', '.', '--profile', 'esm-only'], {
    cwd: plugin,
    quiet: true,
  });
  console.log(`${PLUGIN}: built with tsc; publint --strict and attw --profile esm-only pass`);
  refusePublishConfig([readJson(join(plugin, 'package.json'))]);
  npm(['publish', '--registry', registry.url], plugin, { quiet: true });
}

/** A `publishConfig.registry` would send a package elsewhere than the rehearsal's registry. */
function refusePublishConfig(manifests) {
  for (const m of manifests) {
    if (m.publishConfig?.registry !== undefined) {
      throw new Error(
        `${m.name} has publishConfig.registry ${m.publishConfig.registry}: the rehearsal publishes nowhere but its own registry`,
      );
    }
  }
}

/** The `ts run` program of docs/getting-started.md (in the copy), and what its comments say it prints. */
function gettingStarted() {
  const lines = readFileSync(join(copy, 'docs', 'getting-started.md'), 'utf8').split('\n');
  const start = lines.findIndex((l) => /^```ts\b.*\brun\b/.test(l));
  const end = lines.findIndex((l, i) => i > start && /^```\s*$/.test(l));
  if (start === -1 || end === -1) throw new Error('docs/getting-started.md has no ```ts run program');
  const code = lines.slice(start + 1, end);
  const expected = code.flatMap((l) => {
    const comment = /^\s*console\.log\(.*\);\s*\/\/\s*(.+?)\s*$/.exec(l);
    return comment === null ? [] : [comment[1]];
  });
  return { code: `${code.join('\n')}\n`, expected };
}

function useApp(app) {
  step('type-check the app: strict, module nodenext', () =>
    run(process.execPath, [tsc, '-p', 'tsconfig.nodenext.json'], { cwd: app }),
  );
  step('type-check the app: strict, moduleResolution bundler', () =>
    run(process.execPath, [tsc, '-p', 'tsconfig.bundler.json'], { cwd: app }),
  );
  step("type-check the packages' declarations (skipLibCheck off)", () =>
    run(process.execPath, [tsc, '-p', 'tsconfig.declarations.json'], { cwd: app }),
  );
  step('run the getting-started program (docs/getting-started.md, as written there)', () =>
    runGettingStarted(app, 'dist/getting-started.js'),
  );
  step('run the app: every package and the plugin at work', () =>
    run(process.execPath, ['dist/main.js'], { cwd: app }),
  );
  const bin = join(app, 'node_modules', '.bin', 'signalyard');
  step('signalyard validate crew.yaml (the installed bin)', () => {
    process.stdout.write(run(bin, ['validate', 'crew.yaml'], { cwd: app, quiet: true }).stdout);
  });
  step('signalyard validate crew-invalid.yaml reports the problems (exit 1)', () => {
    const r = run(bin, ['validate', 'crew-invalid.yaml'], { cwd: app, quiet: true, expectStatus: 1 });
    const text = r.stdout + r.stderr;
    if (!/crew-invalid\.yaml:\d+: /.test(text)) throw new Error(`expected file:line problems, got:\n${text}`);
  });
}

/**
 * The bundle path of the guide, in a folder of its own: `pnpm pack:public` into ./bundle (from the
 * working tree, as a clone would), then the guide's own `npm install ./bundle/…` line, run by a
 * shell as written; then the getting-started program, compiled in the app, runs on it.
 */
function installBundle(app) {
  const myApp = join(work, 'my-app');
  const guide = readFileSync(join(copy, 'docs', 'getting-started.md'), 'utf8');
  const line = /^npm install \.\/bundle\/\S*$/m.exec(guide)?.[0];
  if (line === undefined) throw new Error('docs/getting-started.md has no `npm install ./bundle/…` line');
  run('pnpm', ['pack:public', '--skip-build', '--out', join(myApp, 'bundle')], { cwd: root, quiet: true });
  console.log(`$ ${line}`);
  run('bash', ['-c', `${line} --no-audit --no-fund --loglevel=error`], { cwd: myApp });
  const packed = new Map(workspacePackages(root).map((p) => [p.name, p.manifest.version]));
  for (const name of PUBLIC_PACKAGES) {
    const installed = readJson(join(myApp, 'node_modules', name, 'package.json')).version;
    if (installed !== packed.get(name))
      throw new Error(`${name}: the bundle installed ${installed}, expected ${packed.get(name)}`);
  }
  cpSync(join(app, 'dist', 'getting-started.js'), join(myApp, 'getting-started.mjs'));
  runGettingStarted(myApp, 'getting-started.mjs');
  console.log(`${PUBLIC_PACKAGES.length} packages installed from the bundle; the getting-started program runs on them`);
}

/** Runs the compiled getting-started program in `cwd`: it must print what the guide's comments say. */
function runGettingStarted(cwd, file) {
  const { expected } = gettingStarted();
  const printed = run(process.execPath, [file], { cwd, quiet: true }).stdout;
  process.stdout.write(printed);
  if (expected.length > 0 && printed.trimEnd() !== expected.join('\n')) {
    throw new Error(`the guide says it prints\n${expected.join('\n')}\nbut it printed\n${printed}`);
  }
}

function editJson(file, edit) {
  const manifest = readJson(file);
  edit(manifest);
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
}
