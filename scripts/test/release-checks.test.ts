// The checks of the release scripts (scripts/release/*.mjs) on small made-up inputs; the whole
// rehearsal runs in CI (`pnpm release:rehearse`) and proves each fault with `--break`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- plain .mjs scripts without type declarations
import { PUBLIC_PACKAGES, publicPackages } from '../release/packages.mjs';
// @ts-expect-error -- plain .mjs scripts without type declarations
import { checkTarball, manifestRangeProblems } from '../release/tarball.mjs';

const root = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');

type Manifest = Record<string, unknown>;

/** A workspace in a temporary folder: `packages/<dir>/package.json` for each entry. */
function workspace(packages: Record<string, Manifest>): string {
  const dir = mkdtempSync(join(tmpdir(), 'release-checks-'));
  // The repository's pinned pnpm (corepack would fetch another for a root without one).
  const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'ws-root', private: true, packageManager }));
  writeFileSync(join(dir, 'pnpm-workspace.yaml'), 'packages:\n  - packages/*\n');
  for (const [folder, manifest] of Object.entries(packages)) {
    mkdirSync(join(dir, 'packages', folder), { recursive: true });
    writeFileSync(join(dir, 'packages', folder, 'package.json'), JSON.stringify(manifest));
  }
  return dir;
}

const everyPublic = (): Record<string, Manifest> =>
  Object.fromEntries((PUBLIC_PACKAGES as string[]).map((name, i) => [`p${i}`, { name, version: '0.1.0' }]));

describe('the build covers every public package', () => {
  it("tsconfig.build.json references each public package's tsconfig.build.json (else its dist has no .d.ts)", () => {
    const solution = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as {
      references: { path: string }[];
    };
    const referenced = new Set(solution.references.map((r) => r.path));
    const missing = (publicPackages(root) as { dir: string }[])
      .map((p) => `${p.dir.slice(root.length + 1)}/tsconfig.build.json`)
      .filter((path) => !referenced.has(path));
    expect(missing).toEqual([]);
  });
});

describe('publicPackages', () => {
  it('lists the public packages of this repository, in PUBLIC_PACKAGES order', () => {
    const names = (publicPackages(root) as { name: string }[]).map((p) => p.name);
    expect(names).toEqual(PUBLIC_PACKAGES);
    expect(names).toContain('signalyard');
    expect(names).not.toContain('@signalyard/test-utils');
  });

  it('refuses a workspace package that is neither listed nor private (pnpm publish -r would publish it)', () => {
    const dir = workspace({ ...everyPublic(), helpers: { name: '@signalyard/helpers', version: '0.0.0' } });
    expect(() => publicPackages(dir)).toThrow(/@signalyard\/helpers .* is not "private": true/);
  });

  it('refuses a listed package that is private, or missing', () => {
    const packages = everyPublic();
    packages.p0 = { ...packages.p0, private: true };
    delete packages.p1;
    const dir = workspace(packages);
    expect(() => publicPackages(dir)).toThrow(/@signalyard\/core is in PUBLIC_PACKAGES but marked "private": true/);
    expect(() => publicPackages(dir)).toThrow(/@signalyard\/router is in PUBLIC_PACKAGES but no workspace package/);
  });

  it('accepts private packages beside the listed ones', () => {
    const dir = workspace({ ...everyPublic(), tests: { name: 'test-helpers', version: '0.0.0', private: true } });
    expect(publicPackages(dir)).toHaveLength(PUBLIC_PACKAGES.length);
  });
});

describe('manifestRangeProblems', () => {
  const versions = new Map([
    ['@signalyard/core', '0.2.0'],
    ['signalyard', '0.2.0'],
  ]);

  it('names every workspace: range, and sibling ranges other than ^version', () => {
    expect(
      manifestRangeProblems(
        {
          dependencies: { '@signalyard/core': 'workspace:^', zod: '^4.0.0' },
          peerDependencies: { signalyard: '^0.1.0' },
          optionalDependencies: { other: 'workspace:*' },
        },
        versions,
      ),
    ).toEqual([
      'dependencies.@signalyard/core is still workspace:^',
      'peerDependencies.signalyard is ^0.1.0, expected ^0.2.0',
      'optionalDependencies.other is still workspace:*',
    ]);
  });

  it('passes a manifest as pnpm publish writes it', () => {
    expect(manifestRangeProblems({ dependencies: { '@signalyard/core': '^0.2.0', zod: '^4.0.0' } }, versions)).toEqual(
      [],
    );
  });
});

describe('checkTarball', () => {
  /** A tarball of `files` (path → text) under package/, as npm packs. */
  function tarball(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'release-tarball-'));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, 'package', path, '..'), { recursive: true });
      writeFileSync(join(dir, 'package', path), text);
    }
    // files only, as npm packs them (no directory entries)
    execFileSync('tar', ['czf', 'p.tgz', ...Object.keys(files).map((f) => `package/${f}`)], { cwd: dir });
    return join(dir, 'p.tgz');
  }
  const manifest = {
    name: '@signalyard/x',
    version: '0.2.0',
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' },
    bin: { x: './bin/x.js' },
    dependencies: { '@signalyard/core': '^0.2.0' },
  };
  const complete = (): Record<string, string> => {
    return {
      'package.json': JSON.stringify(manifest),
      'README.md': '# x',
      LICENSE: readFileSync(join(root, 'LICENSE'), 'utf8'),
      'dist/index.js': '',
      'dist/index.d.ts': '',
      'bin/x.js': '',
    };
  };
  const versions = new Map([['@signalyard/core', '0.2.0']]);

  it('passes a complete tarball', () => {
    expect(checkTarball(tarball(complete()), manifest, versions)).toMatch(/^@signalyard\/x@0\.2\.0: 6 files/);
  });

  it('fails on a missing files entry: an exports target or the bin not packed', () => {
    const files = complete();
    delete files['dist/index.js'];
    delete files['bin/x.js'];
    expect(() => checkTarball(tarball(files), manifest, versions)).toThrow(
      /lacks package\/bin\/x\.js, package\/dist\/index\.js \(the "files" of package\.json\?\)/,
    );
  });

  it('fails on a workspace: range left in the packed manifest, on tests shipped, on another LICENSE', () => {
    const ranged = complete();
    ranged['package.json'] = JSON.stringify({ ...manifest, dependencies: { '@signalyard/core': 'workspace:^' } });
    expect(() => checkTarball(tarball(ranged), manifest, versions)).toThrow(/@signalyard\/core is still workspace:\^/);
    expect(() => checkTarball(tarball({ ...complete(), 'test/a.test.ts': '' }), manifest, versions)).toThrow(
      /ships package\/test\/a\.test\.ts/,
    );
    expect(() => checkTarball(tarball({ ...complete(), LICENSE: 'other' }), manifest, versions)).toThrow(
      /LICENSE differs/,
    );
  });
});
