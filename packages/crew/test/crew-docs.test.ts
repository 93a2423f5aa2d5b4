// The streaming example of docs/crew.md is run, so the guide cannot drift from the code.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const guide = readFileSync(new URL('../../../docs/crew.md', import.meta.url), 'utf8');

/** The first ```ts block of the guide that contains `marker`. */
function codeBlock(marker: string): string {
  for (const m of guide.matchAll(/```ts(?: run)?\n([\s\S]*?)```/g)) if (m[1]?.includes(marker)) return m[1];
  throw new Error(`no ts block containing ${marker}`);
}

/** Runs a code block as a module and returns what it printed. */
async function runBlock(code: string, name: string): Promise<string[]> {
  const dir = new URL('./.doc-blocks/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${name}-${process.pid}.ts`, dir);
  writeFileSync(file, code);
  const printed: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => {
    printed.push(args.map(String).join(' '));
  };
  try {
    await import(/* @vite-ignore */ file.href);
  } finally {
    console.log = original;
    rmSync(file, { force: true });
  }
  return printed;
}

describe('docs/crew.md', () => {
  it('Streaming text: the example prints what its comments say', async () => {
    const code = codeBlock("for await (const event of executor.executeStream('Start the quiz'))");
    const said = [...code.matchAll(/^\/\/ (.*)$/gm)].map((m) => m[1]);
    said.push(/visibleText\(.*\); \/\/ (.*)$/m.exec(code)?.[1]);
    expect(said).toHaveLength(5);
    expect(await runBlock(code, 'crew-streaming')).toEqual(said);
  });
});
