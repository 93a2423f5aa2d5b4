// Shared tsup settings for every package: ESM only, source maps, Node 20 target. tsup writes the
// JavaScript only: the declarations come from one `tsc -b tsconfig.build.json` over every
// package (scripts/build.mjs), so cleaning dist/ keeps the `.d.ts` files tsc wrote there.

/** @param {{ entry: Record<string, string> }} opts */
export function tsupOptions({ entry }) {
  return {
    entry,
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    sourcemap: true,
    clean: ['!**/*.d.ts'],
    splitting: true,
    treeshake: true,
    dts: false,
  };
}
