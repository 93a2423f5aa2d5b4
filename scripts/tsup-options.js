// Shared tsup settings for every package: ESM only, .d.ts, source maps, Node 20 target.
// The dts build resolves sibling packages through their published `types` (no
// `@signalyard/source` condition) so declarations import them instead of inlining them.

/** @param {{ entry: Record<string, string> }} opts */
export function tsupOptions({ entry }) {
  return {
    entry,
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    sourcemap: true,
    clean: true,
    splitting: true,
    treeshake: true,
    dts: {
      compilerOptions: {
        ignoreDeprecations: '6.0',
        target: 'ES2022',
        lib: ['ES2023'],
        types: ['node'],
        customConditions: [],
        composite: false,
        emitDeclarationOnly: false,
        declarationMap: false,
      },
    },
  };
}
