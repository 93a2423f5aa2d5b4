// The guides cannot drift from the code: the code they show is run. (The configuration
// reference is checked against the schemas by the crew and sessions tests.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const doc = (name: string): string => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

/** The first ```ts block (```ts run included) of a markdown file that contains `marker`. */
function codeBlock(markdown: string, marker: string): string {
  for (const m of markdown.matchAll(/```ts[^\n]*\n([\s\S]*?)```/g)) if (m[1]?.includes(marker)) return m[1];
  throw new Error(`no ts block containing ${marker}`);
}

/** Runs a guide's code block as a module and returns what it printed. */
async function runBlock(code: string, name: string): Promise<string[]> {
  const { mkdirSync, writeFileSync, rmSync } = await import('node:fs');
  const dir = new URL('./.doc-blocks/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${name}-${process.pid}.ts`, dir);
  writeFileSync(file, code);
  const printed: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => {
    printed.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  };
  try {
    await import(/* @vite-ignore */ file.href);
  } finally {
    console.log = original;
    rmSync(file, { force: true });
  }
  return printed;
}

describe('the code in the guides runs as they say', () => {
  it('README.md: the taste of the Runner', async () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    expect(await runBlock(codeBlock(readme, 'createRunner'), 'readme')).toEqual(['completed', 'rejected']);
  });

  it('docs/streaming.md: a stream from a worker, resumed from an offset', async () => {
    const printed = await runBlock(codeBlock(doc('streaming.md'), 'resumeStream'), 'streaming-resume');
    expect(printed).toEqual(['completed', 'Hello from a worker']);
  });

  it('docs/getting-started.md: your first Runner', async () => {
    const printed = await runBlock(codeBlock(doc('getting-started.md'), 'createRunner'), 'getting-started');
    expect(printed).toEqual(['completed rejected {"type":"reject","reason":"placing_order"}']);
  });
});
