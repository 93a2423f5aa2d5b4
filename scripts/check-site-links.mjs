// Part of `pnpm docs:api`, after typedoc: checks every link of the built API site (docs/api).
// A link inside the site must reach a file of the site, and its #anchor an element with that id
// on the page; a link to a raw markdown file (a guide or README that is not a page of the site,
// which typedoc copies into media/ as it is) fails, and so does a link that leaves the site
// through a relative path. Links to other sites (http:, https:, mailto:) are not followed.
// Exit 1 with every broken link, by page.
//
// `node scripts/check-site-links.mjs [DIR]` checks another built site (default: docs/api).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every .html file under `dir`, relative paths. */
function pages(dir) {
  const out = [];
  const walk = (sub) => {
    for (const name of readdirSync(join(dir, sub))) {
      const rel = sub === '' ? name : `${sub}/${name}`;
      if (statSync(join(dir, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.html')) out.push(rel);
    }
  };
  walk('');
  return out.sort();
}

const decode = (text) =>
  text.replace(
    /&(amp|lt|gt|quot|#39|#x27);/g,
    (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[e],
  );

/** The `href`s and `src`s of a page's elements (typedoc writes double-quoted attributes). */
function linksOf(html) {
  const links = [];
  for (const m of html.matchAll(/<(a|link|img|script|iframe)\b[^>]*?\s(href|src)="([^"]*)"/g)) links.push(decode(m[3]));
  return links;
}

/** The ids a page's elements carry (and the names of old-style `<a name>` anchors). */
function anchorsOf(html) {
  const ids = new Set();
  for (const m of html.matchAll(/\s(?:id|name)="([^"]*)"/g)) ids.add(decode(m[1]));
  return ids;
}

/**
 * The broken links of the site in `dir`: `{ page, link, problem }` each. Pages are read once;
 * anchors are looked up in the target page.
 */
export function brokenLinks(dir) {
  const root = resolve(dir);
  const anchors = new Map();
  const anchorsIn = (file) => {
    if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchors.get(file);
  };
  const broken = [];
  for (const page of pages(root)) {
    const file = join(root, page);
    for (const link of linksOf(readFileSync(file, 'utf8'))) {
      if (/^(https?:|mailto:|data:|javascript:)/i.test(link) || link.startsWith('//')) continue;
      const [pathPart, hash] = splitHash(link);
      const path = decodeURIComponent(pathPart.split('?')[0]);
      const target = path === '' ? file : resolve(dirname(file), path);
      const problem = (() => {
        if (/\.(md|markdown)$/i.test(path))
          return 'a link to a raw markdown file: make it a page of the site (typedoc projectDocuments)';
        if (target !== root && !target.startsWith(root + sep)) return `leaves the site (${relative(root, target)})`;
        if (!existsSync(target)) return 'no such file in the site';
        if (
          hash !== undefined &&
          hash !== '' &&
          target.endsWith('.html') &&
          !anchorsIn(target).has(decodeURIComponent(hash))
        ) {
          return `no element with id "${decodeURIComponent(hash)}" on ${relative(root, target)}`;
        }
        return undefined;
      })();
      if (problem !== undefined) broken.push({ page, link, problem });
    }
  }
  return broken;
}

function splitHash(link) {
  const at = link.indexOf('#');
  return at === -1 ? [link, undefined] : [link.slice(0, at), link.slice(at + 1)];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'api');
  if (!existsSync(join(dir, 'index.html'))) {
    console.error(`check-site-links: no site at ${dir} (run pnpm docs:api)`);
    process.exit(2);
  }
  const broken = brokenLinks(dir);
  if (broken.length > 0) {
    let last;
    for (const { page, link, problem } of broken) {
      if (page !== last) console.error(`\n${page}`);
      last = page;
      console.error(`  ${link}: ${problem}`);
    }
    console.error(`\n${broken.length} broken links in ${dir}`);
    process.exit(1);
  }
  console.log(`site links: ${pages(dir).length} pages, every link inside the site reaches its page and anchor`);
}
