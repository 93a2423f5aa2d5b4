// Which workspace packages each published package may import: the "depends on" column of the
// design's package table (shared/design/README.md), plus the CLI's `--config` commands
// (`signalyard`, `@signalyard/mcp`, `@signalyard/replay`). Sibling packages never import each other;
// only the meta-package sees them all. eslint.config.js turns this table into
// `no-restricted-imports` rules per package, and scripts/test/layering.test.ts checks that every
// package.json declares nothing beyond it and that every package has a row.

/** Folder under packages/ → the workspace packages its src/ may import (`@signalyard/core` covers its subpaths). */
export const LAYERING = {
  core: [],
  router: ['@signalyard/core'],
  fsm: ['@signalyard/core'],
  sessions: ['@signalyard/core'],
  crew: ['@signalyard/core'],
  pipeline: ['@signalyard/core'],
  signalyard: [
    '@signalyard/core',
    '@signalyard/router',
    '@signalyard/fsm',
    '@signalyard/sessions',
    '@signalyard/crew',
    '@signalyard/pipeline',
  ],
  'store-sqlite': ['@signalyard/core'],
  'store-postgres': ['@signalyard/core'],
  'ai-sdk': ['@signalyard/core'],
  otel: ['@signalyard/core'],
  inspector: ['@signalyard/core'],
  nats: ['@signalyard/core'],
  mcp: ['@signalyard/core'],
  replay: ['@signalyard/core', 'signalyard'],
  cli: [
    '@signalyard/core',
    '@signalyard/sessions',
    '@signalyard/crew',
    '@signalyard/inspector',
    '@signalyard/store-sqlite',
    '@signalyard/store-postgres',
    'signalyard',
    '@signalyard/mcp',
    '@signalyard/replay',
  ],
  // Private test helpers: imported by tests only, never by a published package.
  'test-utils': null,
};

/** Every workspace package name a published package could import. */
export const WORKSPACE_PACKAGES = [
  'signalyard',
  ...Object.keys(LAYERING)
    .filter((folder) => folder !== 'signalyard')
    .map((folder) => `@signalyard/${folder}`),
];

/** The `no-restricted-imports` patterns for one package folder: every workspace package it may not import. */
export function restrictedImportsOf(folder) {
  const allowed = LAYERING[folder];
  if (allowed === null || allowed === undefined) return [];
  const self = folder === 'signalyard' ? 'signalyard' : `@signalyard/${folder}`;
  return WORKSPACE_PACKAGES.filter((name) => name !== self && !allowed.includes(name)).flatMap((name) => [
    name,
    `${name}/*`,
  ]);
}
