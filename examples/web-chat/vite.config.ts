// Builds the pages (page/) into dist/page: the customer's chat (index.html) and the reviewer's
// page (review.html), each one bundled script with the AI SDK's client where it needs it, no CDN.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const page = (name: string): string => fileURLToPath(new URL(`./page/${name}`, import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL('./page', import.meta.url)),
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('./dist/page', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    rollupOptions: { input: { index: page('index.html'), review: page('review.html') } },
  },
});
