// What every published tarball must hold, checked on the tarball itself (as `pnpm pack` wrote it,
// or as the registry serves it): the LICENSE (the repository's), the README, every `exports`
// target and bin, a package.json without `workspace:` ranges whose ranges on sibling packages
// are `^` their version, and no tests, benchmarks or node_modules.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './steps.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const license = readFileSync(join(root, 'LICENSE'), 'utf8');

function tarEntries(tarball) {
  return run('tar', ['tzf', tarball], { cwd: dirname(tarball), quiet: true })
    .stdout.split('\n')
    .filter(Boolean);
}

function tarFile(tarball, entry) {
  return run('tar', ['xzf', tarball, '-O', entry], { cwd: dirname(tarball), quiet: true }).stdout;
}

/**
 * The `workspace:` ranges left in a manifest, and its ranges on the packages of `versions`
 * (name → version) that are not `^version`: one line each.
 */
export function manifestRangeProblems(manifest, versions) {
  const problems = [];
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (range.startsWith('workspace:')) problems.push(`${field}.${name} is still ${range}`);
      else if (versions.has(name) && range !== `^${versions.get(name)}`) {
        problems.push(`${field}.${name} is ${range}, expected ^${versions.get(name)}`);
      }
    }
  }
  return problems;
}

/**
 * Checks the tarball of the package whose source manifest is `manifest` (its bins are read from
 * there); `versions` maps every public package to the version being released. Throws on the
 * first problem; returns a one-line summary.
 */
export function checkTarball(tarball, manifest, versions) {
  const entries = tarEntries(tarball);
  const packed = JSON.parse(tarFile(tarball, 'package/package.json'));
  const required = ['package/package.json', 'package/README.md', 'package/LICENSE'];
  for (const target of Object.values(manifest.bin ?? {})) required.push(join('package', target));
  for (const entry of Object.values(packed.exports)) {
    if (typeof entry !== 'object') continue;
    required.push(join('package', entry.types), join('package', entry.default));
  }
  const missing = required.filter((f) => !entries.includes(f));
  if (missing.length > 0) throw new Error(`${tarball} lacks ${missing.join(', ')} (the "files" of package.json?)`);
  const stray = entries.filter((f) => /^package\/(test|bench|node_modules)\//.test(f));
  if (stray.length > 0) throw new Error(`${tarball} ships ${stray.slice(0, 5).join(', ')}`);
  if (tarFile(tarball, 'package/LICENSE') !== license) {
    throw new Error(`${tarball}: package/LICENSE differs from the repository's LICENSE`);
  }
  const ranges = manifestRangeProblems(packed, versions);
  if (ranges.length > 0) throw new Error(`${tarball}: ${ranges.join('; ')}`);
  return `${packed.name}@${packed.version}: ${entries.length} files, dependencies ${JSON.stringify(packed.dependencies ?? {})}`;
}
