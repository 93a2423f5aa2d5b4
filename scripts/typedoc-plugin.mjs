// The API site's own typedoc plugin (typedoc.json `plugin`):
// - guides are named by their title (their first `# heading`), not by their file name;
// - the index page shows the README without its first heading, which repeats the page title;
// - ```mermaid blocks are drawn as diagrams by the Mermaid bundle from node_modules, copied into
//   the site (assets/mermaid.min.js) and loaded only by pages that have a diagram: no CDN;
// - a guide's link to a source file or folder of the repository (architecture.md points at
//   packages/*/src/…) is its label alone in the site, which holds pages, not sources: typedoc
//   would copy a file there as it is, and warns on a folder. Links to pages, images and data
//   files stay; a link to a markdown file that is no page stays too, for
//   scripts/check-site-links.mjs to refuse.
import { copyFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';
import { Application, Converter, JSX, ReflectionKind, RendererEvent } from 'typedoc';

const MERMAID_FILE = 'assets/mermaid.min.js';

/** The text of a markdown heading line, without its inline code marks. */
const plainTitle = (heading) => heading.replace(/`([^`]*)`/g, '$1').trim();

/** The first `# heading` of a document's content (comment display parts: text, `code`, links). */
function titleOf(content) {
  const match = /^\s*# (.+)$/m.exec(content.map((part) => part.text).join(''));
  return match === null ? undefined : plainTitle(match[1]);
}

/**
 * Loads Mermaid when the page has a diagram, then draws each `<pre><code class="mermaid">` in
 * its place (typedoc leaves those blocks unhighlighted: `ignoredHighlightLanguages`).
 */
function mermaidLoader(src) {
  return `(() => {
  const blocks = [...document.querySelectorAll('pre > code.mermaid')];
  if (blocks.length === 0) return;
  const nodes = blocks.map((code) => {
    const div = document.createElement('div');
    div.className = 'mermaid';
    div.textContent = code.textContent;
    code.parentElement.replaceWith(div);
    return div;
  });
  const script = document.createElement('script');
  script.src = ${JSON.stringify(src)};
  script.onload = () => {
    const dark = matchMedia('(prefers-color-scheme: dark)').matches || document.documentElement.dataset.theme === 'dark';
    window.mermaid.initialize({ startOnLoad: false, theme: dark ? 'dark' : 'default', securityLevel: 'strict' });
    void window.mermaid.run({ nodes });
  };
  document.head.append(script);
})();`;
}

/** Source code: what a guide may link to in the repository, but the site does not serve. */
const SOURCE_EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs']);

/** Is `path` (absolute) a folder, or a source file, that the site should not link to? */
function isRepositorySource(path) {
  try {
    return statSync(path).isDirectory() || SOURCE_EXTENSIONS.has(extname(path));
  } catch {
    return false; // missing: left for typedoc's own validation
  }
}

/**
 * Replaces the markdown link `[label](…)` around `parts[at]` (a relative link) by its label:
 * the text before must end with `](`, an earlier text part hold the `[`, the text after start
 * with `)`. Returns false, changing nothing, when the link has another shape.
 */
export function unlink(parts, at) {
  const before = parts[at - 1];
  const after = parts[at + 1];
  if (before?.kind !== 'text' || !before.text.endsWith('](')) return false;
  const close = after?.kind === 'text' ? /^\s*(?:"[^"]*")?\)/.exec(after.text) : null;
  if (close === null) return false;
  let open = at - 1;
  let text = before.text.slice(0, -2);
  while (open >= 0 && (parts[open].kind !== 'text' || !(open === at - 1 ? text : parts[open].text).includes('['))) {
    open--;
  }
  if (open < 0) return false;
  before.text = text;
  const opener = parts[open];
  const index = opener.text.lastIndexOf('[');
  opener.text = opener.text.slice(0, index) + opener.text.slice(index + 1);
  after.text = after.text.slice(close[0].length);
  parts.splice(at, 1);
  return true;
}

/** Unlinks every relative link of the project's documents that points at repository sources. */
function unlinkRepositorySources(project) {
  const contents = [project.readme, ...project.getReflectionsByKind(ReflectionKind.Document).map((d) => d.content)];
  const unlinked = new Set();
  for (const parts of contents) {
    if (parts === undefined) continue;
    for (let at = parts.length - 1; at >= 0; at--) {
      const part = parts[at];
      if (part.kind !== 'relative-link' || typeof part.target !== 'number') continue;
      const path = project.files.resolve(part.target, project);
      if (typeof path === 'string' && isRepositorySource(path) && unlink(parts, at)) unlinked.add(part.target);
    }
  }
  // No page links to them any more: neither copied into the site nor checked as media.
  for (const target of unlinked) {
    const path = project.files.mediaToPath.get(target);
    project.files.mediaToPath.delete(target);
    project.files.pathToMedia.delete(path);
  }
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  // After the packages are merged and the guides added, before validation warns about folders.
  app.on(Application.EVENT_PROJECT_REVIVE, unlinkRepositorySources);

  // A README is named after its folder (examples/exam-crew/README.md: exam-crew), so that each
  // has a URL of its own (documents/exam-crew.html).
  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    const file = document.project.files.getReflectionPath?.(document) ?? '';
    if (document.name === 'README') document.name = basename(dirname(file)) || document.name;
  });

  // Renamed once the pages have their URLs, so the URLs stay the file names (runner.html).
  app.renderer.on(RendererEvent.BEGIN, (event) => {
    for (const document of event.project.getReflectionsByKind(ReflectionKind.Document)) {
      if (typeof document.frontmatter?.title === 'string') continue;
      const title = titleOf(document.content);
      if (title !== undefined) document.name = title;
    }
    const readme = event.project.readme;
    const first = readme?.[0];
    if (first?.kind === 'text') first.text = first.text.replace(/^\s*# [^\n]*\n+/, '');
  });

  app.renderer.hooks.on('body.end', (context) =>
    JSX.createElement(
      'script',
      null,
      JSX.createElement(JSX.Raw, { html: mermaidLoader(context.relativeURL(MERMAID_FILE)) }),
    ),
  );

  app.renderer.on(RendererEvent.END, (event) => {
    const bundle = createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js');
    copyFileSync(bundle, join(event.outputDirectory, MERMAID_FILE));
  });
}
