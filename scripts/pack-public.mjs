// `pnpm pack:public [--out DIR] [--skip-build]`: the release bundle. Packs the public packages
// (scripts/release/packages.mjs: never a private one) with `pnpm pack`, which turns `workspace:`
// ranges into real ones, into one folder (default: bundle/ at the repository root; a relative
// --out is taken from where you run the command), after building them (skip with
// --skip-build), and checks every tarball (scripts/release/tarball.mjs). Earlier tarballs in
// that folder are removed first, so that
//
//     npm install ./bundle/*.tgz
//
// run beside the folder installs exactly these packages, as docs/getting-started.md says.
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publicPackages } from './release/packages.mjs';
import { currentStep, run, step } from './release/steps.mjs';
import { checkTarball } from './release/tarball.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
let out = join(root, 'bundle');
let build = true;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--skip-build') build = false;
  else if (argv[i] === '--out' && argv[i + 1] !== undefined)
    out = resolve(process.env.INIT_CWD ?? process.cwd(), argv[++i]);
  else {
    console.error(`pack:public: unknown argument ${argv[i]} (expected --out DIR, --skip-build)`);
    process.exit(2);
  }
}

try {
  const packages = step('the public packages', () => {
    const list = publicPackages(root);
    console.log(list.map((p) => p.name).join(', '));
    return list;
  });
  if (build) step('build them', () => run('pnpm', ['build'], { cwd: root }));
  step(`pack them into ${out}`, () => {
    mkdirSync(out, { recursive: true });
    for (const f of readdirSync(out)) if (f.endsWith('.tgz')) rmSync(join(out, f));
    const versions = new Map(packages.map((p) => [p.name, p.manifest.version]));
    for (const pkg of packages) {
      const before = new Set(readdirSync(out));
      run('pnpm', ['pack', '--pack-destination', out], { cwd: pkg.dir, quiet: true });
      const added = readdirSync(out).filter((f) => !before.has(f));
      if (added.length !== 1) throw new Error(`pnpm pack of ${pkg.name}: expected one new tarball, found ${added}`);
      console.log(`${added[0]}  ${checkTarball(join(out, added[0]), pkg.manifest, versions)}`);
    }
  });
  console.log(`\n::: ${packages.length} tarballs in ${out}`);
  if (dirname(out) === root) {
    console.log(`Copy that folder into your project (or pack with --out <your project>/bundle), then there:\n`);
    console.log(`    npm install ./${basename(out)}/*.tgz\n`);
  } else {
    console.log(
      `Install them all in your project:\n\n    cd ${dirname(out)} && npm install ./${basename(out)}/*.tgz\n`,
    );
  }
} catch (error) {
  console.error(
    `\n::: pack:public FAILED at step "${currentStep()}"\n${error instanceof Error ? error.message : error}`,
  );
  process.exit(1);
}
