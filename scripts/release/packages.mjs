// The packages Signalyard publishes, and the checks both `pnpm pack:public` and
// `pnpm release:rehearse` make of the workspace before packing anything.
//
// A new public package joins both by one line in PUBLIC_PACKAGES: it is then packed into the
// bundle, published to the rehearsal's registry, installed by name outside the workspace, and
// its tarball checked. Every other workspace package must be `"private": true`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every package Signalyard publishes, in dependency order. */
export const PUBLIC_PACKAGES = [
  '@signalyard/core',
  '@signalyard/router',
  '@signalyard/fsm',
  '@signalyard/sessions',
  '@signalyard/crew',
  '@signalyard/pipeline',
  'signalyard',
  '@signalyard/store-sqlite',
  '@signalyard/store-postgres',
  '@signalyard/nats',
  '@signalyard/ai-sdk',
  '@signalyard/otel',
  '@signalyard/inspector',
  '@signalyard/mcp',
  '@signalyard/replay',
  '@signalyard/cli',
];

/**
 * The workspace's packages (pnpm's own listing of pnpm-workspace.yaml), the root excluded:
 * `{ name, dir, manifest }`, where `manifest` is the package.json as it is on disk.
 */
export function workspacePackages(root) {
  const listed = JSON.parse(
    execFileSync('pnpm', ['ls', '-r', '--depth', '-1', '--json'], { cwd: root, encoding: 'utf8' }),
  );
  return listed
    .filter((p) => p.path !== root)
    .map((p) => ({ name: p.name, dir: p.path, manifest: readJson(join(p.path, 'package.json')) }));
}

/**
 * The public packages of the workspace at `root`, in PUBLIC_PACKAGES order. Throws when one is
 * missing or private, or when a package not listed there lacks `"private": true` (`pnpm publish
 * -r` would publish it).
 */
export function publicPackages(root) {
  const all = workspacePackages(root);
  const problems = [];
  const byName = new Map(all.map((p) => [p.name, p]));
  for (const name of PUBLIC_PACKAGES) {
    const pkg = byName.get(name);
    if (pkg === undefined) problems.push(`${name} is in PUBLIC_PACKAGES but no workspace package has that name`);
    else if (pkg.manifest.private === true) problems.push(`${name} is in PUBLIC_PACKAGES but marked "private": true`);
  }
  for (const pkg of all) {
    if (!PUBLIC_PACKAGES.includes(pkg.name) && pkg.manifest.private !== true) {
      problems.push(
        `${pkg.name} (${pkg.dir}) is not "private": true, so pnpm publish -r would publish it; ` +
          'mark it private, or list it in PUBLIC_PACKAGES (scripts/release/packages.mjs)',
      );
    }
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return PUBLIC_PACKAGES.map((name) => byName.get(name));
}

export function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}
