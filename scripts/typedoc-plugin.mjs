// The API site's own typedoc plugin (typedoc.json `plugin`):
// - guides are named by their title (their first `# heading`), not by their file name;
// - the index page shows the README without its first heading, which repeats the page title;
// - ```mermaid blocks are drawn as diagrams by the Mermaid bundle from node_modules, copied into
//   the site (assets/mermaid.min.js) and loaded only by pages that have a diagram: no CDN.
import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Converter, JSX, ReflectionKind, RendererEvent } from 'typedoc';

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

/** @param {import('typedoc').Application} app */
export function load(app) {
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
