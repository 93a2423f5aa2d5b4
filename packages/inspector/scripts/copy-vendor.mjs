// Part of `pnpm build`: copies the Mermaid bundle (the page's diagram library) and its licence
// into dist/vendor/, so the published package draws diagrams offline without depending on
// `mermaid`'s install tree; then prints the page's size (gzip), which must stay under 300 KB
// without the diagram library.
import { copyFileSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const require = createRequire(import.meta.url);
const bundle = require.resolve('mermaid/dist/mermaid.min.js');
const mermaidRoot = join(dirname(bundle), '..');
const vendor = join(root, 'dist', 'vendor');
mkdirSync(vendor, { recursive: true });
copyFileSync(bundle, join(vendor, 'mermaid.min.js'));
copyFileSync(join(mermaidRoot, 'LICENSE'), join(vendor, 'mermaid.LICENSE'));

const gz = (file) => gzipSync(readFileSync(file)).length;
const ui = readdirSync(join(root, 'ui')).reduce((sum, f) => sum + gz(join(root, 'ui', f)), 0);
const limit = 300 * 1024;
console.log(
  `inspector page: ${(ui / 1024).toFixed(1)} KB gzip (limit 300 KB); diagram library: ${(gz(bundle) / 1024).toFixed(0)} KB gzip, loaded on first diagram`,
);
if (ui > limit) {
  console.error('the inspector page is larger than 300 KB gzip');
  process.exit(1);
}
