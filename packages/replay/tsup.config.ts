import { defineConfig } from 'tsup';
import { tsupOptions } from '../../scripts/tsup-options.js';

export default defineConfig(tsupOptions({ entry: { index: 'src/index.ts', vitest: 'src/vitest.ts' } }));
