// The API site's link check (scripts/check-site-links.mjs, run by `pnpm docs:api` after typedoc)
// on a small made-up site, and the typedoc plugin's unlinking of repository sources.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { brokenLinks } from '../check-site-links.mjs';
// @ts-expect-error -- a plain .mjs script without type declarations
import { unlink } from '../typedoc-plugin.mjs';

function site(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'site-links-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const page = (body: string): string => `<html><body>${body}</body></html>`;

describe('brokenLinks', () => {
  it('passes links to pages, anchors on them, assets and other sites', () => {
    const dir = site({
      'index.html': page(
        '<a href="documents/guide.html#the-part">guide</a> <a href="#top">top</a> <h1 id="top">x</h1>' +
          '<img src="media/picture.png"> <a href="https://example.org/x.md">elsewhere</a> <a href="mailto:a@b.c">m</a>',
      ),
      'documents/guide.html': page('<h2 id="the-part">part</h2><a href="../index.html">home</a>'),
      'media/picture.png': 'png',
    });
    expect(brokenLinks(dir)).toEqual([]);
  });

  it('refuses a link to a raw markdown file, even one copied into the site', () => {
    const dir = site({
      'index.html': page('<a href="media/approvals.md">approvals</a> <a href="media/approvals.md#from-chat">x</a>'),
      'media/approvals.md': '# Approvals',
    });
    expect(brokenLinks(dir)).toEqual([
      expect.objectContaining({
        page: 'index.html',
        link: 'media/approvals.md',
        problem: expect.stringMatching(/raw markdown/),
      }),
      expect.objectContaining({ link: 'media/approvals.md#from-chat', problem: expect.stringMatching(/raw markdown/) }),
    ]);
  });

  it('refuses a missing anchor, a missing page and a path out of the site', () => {
    const dir = site({
      'index.html': page(
        '<a href="documents/guide.html#gone">a</a> <a href="documents/none.html">b</a> <a href="../outside.html">c</a>' +
          '<a href="#here">d</a>',
      ),
      'documents/guide.html': page('<h2 id="there">x</h2>'),
    });
    expect(brokenLinks(dir).map((b: { link: string; problem: string }) => [b.link, b.problem])).toEqual([
      ['documents/guide.html#gone', 'no element with id "gone" on documents/guide.html'],
      ['documents/none.html', 'no such file in the site'],
      ['../outside.html', 'leaves the site (../outside.html)'],
      ['#here', 'no element with id "here" on index.html'],
    ]);
  });
});

describe('the API site', () => {
  it('holds every guide of docs/ and every example README (typedoc projectDocuments)', () => {
    const root = new URL('../../', import.meta.url);
    const documents = (
      JSON.parse(readFileSync(new URL('typedoc.json', root), 'utf8')) as { projectDocuments: string[] }
    ).projectDocuments;
    const guides = readdirSync(new URL('docs/', root))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`);
    const examples = readdirSync(new URL('examples/', root))
      .map((d) => `examples/${d}/README.md`)
      .filter((f) => existsSync(new URL(f, root)));
    expect(guides.length).toBeGreaterThan(20);
    expect(examples).toContain('examples/web-chat/README.md');
    expect([...guides, ...examples].filter((f) => !documents.includes(f))).toEqual([]);
  });
});

describe("the typedoc plugin's unlink", () => {
  const text = (t: string) => ({ kind: 'text', text: t });
  const link = { kind: 'relative-link', text: '../packages/x/src/a.ts', target: 1 };

  it('turns [label](source) into the label, keeping its code spans', () => {
    const parts = [text('see ['), { kind: 'code', text: '`a.ts`' }, text(']('), link, text(') for it')];
    expect(unlink(parts, 3)).toBe(true);
    expect(parts).toEqual([text('see '), { kind: 'code', text: '`a.ts`' }, text(''), text(' for it')]);
  });

  it('leaves a link of another shape alone', () => {
    const parts = [text('<img src="'), link, text('">')];
    expect(unlink(parts, 1)).toBe(false);
    expect(parts).toHaveLength(3);
  });
});
