// docs/architecture.md's package map is checked against the package.json files: its table lists
// every package folder with exactly the workspace packages it depends on, and its diagram draws
// exactly those edges. The page fails this test the moment a dependency is added or dropped
// without it.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const page = readFileSync(new URL('docs/architecture.md', root), 'utf8');

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const manifests: Manifest[] = readdirSync(new URL('packages/', root), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => JSON.parse(readFileSync(new URL(`packages/${d.name}/package.json`, root), 'utf8')) as Manifest);
const names = new Set(manifests.map((m) => m.name));
/** The workspace packages `m` depends on at run time (dependencies and peer dependencies). */
const workspaceDeps = (m: Manifest): string[] =>
  Object.keys({ ...m.dependencies, ...m.peerDependencies })
    .filter((d) => names.has(d))
    .sort();

/** The package map's section: from its heading to the next `## `. */
function section(): string {
  const start = page.indexOf('## The package map');
  expect(start, 'docs/architecture.md has a "## The package map" section').toBeGreaterThanOrEqual(0);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end === -1 ? undefined : end);
}

/** The table's rows: package → (diagram node, workspace dependencies). */
function tableRows(text: string): Map<string, { node: string; deps: string[] }> {
  const rows = new Map<string, { node: string; deps: string[] }>();
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | `package` | `node` | `dep`, `dep` | what |
    if (cells.length < 5 || !/^`[^`]+`$/.test(cells[1] ?? '')) continue;
    const ticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    const [name] = ticked(cells[1] as string);
    const [node] = ticked(cells[2] as string);
    if (name === undefined || node === undefined) continue;
    rows.set(name, { node, deps: ticked(cells[3] as string).sort() });
  }
  return rows;
}

/** The diagram's edges, by node id: `a["…"] --> b & c` and `a --> b`. */
function diagramEdges(text: string): Map<string, string[]> {
  const start = text.indexOf('```mermaid');
  const end = text.indexOf('```', start + 3);
  const edges = new Map<string, string[]>();
  for (const raw of text.slice(start, end).split('\n')) {
    const line = raw.replace(/\[[^\]]*\]/g, '').trim();
    const arrow = line.indexOf('-->');
    if (arrow === -1) continue;
    const from = line.slice(0, arrow).trim();
    const to = line
      .slice(arrow + 3)
      .split('&')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    edges.set(from, [...(edges.get(from) ?? []), ...to]);
  }
  return edges;
}

describe('docs/architecture.md: the package map', () => {
  const text = section();
  const rows = tableRows(text);
  const edges = diagramEdges(text);
  const byNode = new Map([...rows].map(([name, row]) => [row.node, name]));

  it('the table lists every package, once', () => {
    expect([...rows.keys()].sort()).toEqual([...names].sort());
  });

  it("each row's dependencies are its package.json's workspace dependencies", () => {
    for (const m of manifests) expect(rows.get(m.name)?.deps, m.name).toEqual(workspaceDeps(m));
  });

  it('the diagram draws exactly those dependencies', () => {
    for (const m of manifests) {
      const node = rows.get(m.name)?.node ?? '';
      const drawn = (edges.get(node) ?? []).map((n) => byNode.get(n) ?? `unknown node ${n}`).sort();
      expect(drawn, `${m.name} (node ${node})`).toEqual(workspaceDeps(m));
    }
  });

  it('a row or edge that drifts from package.json is caught', () => {
    const drifted = text.replace(/(\| `@signalyard\/cli` \| `[^`]+` \| )`@signalyard\/core`, /, '$1');
    expect(drifted).not.toBe(text);
    const cli = manifests.find((m) => m.name === '@signalyard/cli') as Manifest;
    expect(tableRows(drifted).get('@signalyard/cli')?.deps).not.toEqual(workspaceDeps(cli));
  });
});
