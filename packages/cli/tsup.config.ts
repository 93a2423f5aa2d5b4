import { defineConfig } from 'tsup';
import { tsupOptions } from '../../scripts/tsup-options.js';

// `cli` is the bin (`dist/cli.js`); its `#!/usr/bin/env node` line comes from src/cli.ts
// (esbuild keeps an entry's hashbang, and tsup marks such files executable).
export default defineConfig(tsupOptions({ entry: { index: 'src/index.ts', cli: 'src/cli.ts' } }));
