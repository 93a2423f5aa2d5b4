import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const UI_DIR = new URL('../ui/', import.meta.url);
const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/**
 * The files the page is made of, by URL path: `/` is `ui/index.html`; `/assets/<name>` each
 * script module and style sheet in `ui/` (the page's modules import each other from there).
 */
function uiFiles(): ReadonlyMap<string, { file: string; type: string }> {
  const files = new Map([['/', { file: 'index.html', type: 'text/html; charset=utf-8' }]]);
  for (const name of readdirSync(UI_DIR)) {
    const type = TYPES[/^[a-z][a-z0-9-]*\.(js|css)$/.exec(name)?.[1] ?? ''];
    if (type !== undefined) files.set(`/assets/${name}`, { file: name, type });
  }
  return files;
}

/** The diagram library's URL path (loaded by the page only when it draws a diagram). */
const MERMAID_PATH = '/assets/mermaid.min.js';

/**
 * Where the Mermaid bundle is: copied into `dist/vendor/` by the package build, or (running
 * from the sources, in this repository) the `mermaid` development dependency's own file.
 */
function mermaidFile(): string | undefined {
  const built = fileURLToPath(new URL('../dist/vendor/mermaid.min.js', import.meta.url));
  if (existsSync(built)) return built;
  const beside = fileURLToPath(new URL('./vendor/mermaid.min.js', import.meta.url));
  if (existsSync(beside)) return beside;
  try {
    return createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js');
  } catch {
    return undefined;
  }
}

/** The page's static files, read once and kept. Files ship in the package (`ui/`, `dist/vendor/`): no CDN. */
export class StaticAssets {
  readonly #cache = new Map<string, Promise<Buffer | undefined>>();
  readonly #files = uiFiles();

  /** True when `path` names one of the page's files. */
  has(path: string): boolean {
    return this.#files.has(path) || path === MERMAID_PATH;
  }

  /** The file at `path` and its content type, or `undefined` when it is not there. */
  async get(path: string): Promise<{ body: Buffer; type: string } | undefined> {
    const entry = this.#files.get(path);
    const file = entry !== undefined ? fileURLToPath(new URL(entry.file, UI_DIR)) : mermaidFile();
    if (file === undefined) return undefined;
    let body = this.#cache.get(file);
    if (body === undefined) {
      body = readFile(file).catch(() => undefined);
      this.#cache.set(file, body);
    }
    const content = await body;
    if (content === undefined) return undefined;
    return { body: content, type: entry?.type ?? 'text/javascript; charset=utf-8' };
  }
}
