// docs/cli.md's `resolve` table is the CLI's real output for examples/routing/routing.toml:
// each row is run in-process and compared, so the guide cannot drift from the resolver.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { run } from '@signalyard/cli';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const guide = readFileSync(new URL('../cli.md', import.meta.url), 'utf8');
const section = guide.slice(guide.indexOf('## resolve\n'), guide.indexOf('## route explain'));
const rows = [...section.matchAll(/^\| `(--channel [^`]*)` \| (.*) \|$/gm)]
  .map((m) => ({
    args: m[1]!.split(' '),
    cells: m[2]!.split(' | ').map((c) => c.replace(/`/g, '')),
  }))
  .filter((row) => row.cells.length === 4); // the results table, not the options table

/** What `signalyard resolve` prints, as the table's cells: agent, session key, matchedBy, binding. */
async function resolve(args: readonly string[]): Promise<string[]> {
  let out = '';
  const code = await run(['resolve', '--config', 'examples/routing/routing.toml', ...args], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (out += s) },
    env: {},
    cwd: root,
  });
  expect(code, out).toBe(0);
  const field = (name: string): string => new RegExp(`^${name}: (.*)$`, 'm').exec(out)?.[1] ?? '';
  return [field('agent'), field('session key'), field('matchedBy'), field('binding').replace(/ \(.*\)$/, '')];
}

describe('docs/cli.md: the resolve table', () => {
  it('has rows', () => {
    expect(rows.length).toBeGreaterThan(5);
  });

  for (const row of rows) {
    it(row.args.join(' '), async () => {
      expect(await resolve(row.args)).toEqual(row.cells);
    });
  }
});
