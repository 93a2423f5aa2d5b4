// The guides cannot drift from the code. Every code block of README.md and docs/*.md marked as a
// complete program — its info string is `ts run` — is type-checked with the repository's strict
// settings against the workspace packages (their sources, so no build is needed), then run.
// Blocks marked plain `ts` are fragments (an interface, one call in context) and are not run.
// A program's own assertions make it fail when the code no longer does what the guide says.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** A `ts run` block: where it is and what it says. */
interface Program {
  readonly doc: string;
  /** The markdown line of the opening fence (1-based). */
  readonly line: number;
  readonly code: string;
  /** The generated module's file name. */
  readonly file: string;
}

const root = new URL('../../', import.meta.url);
const out = new URL('../.doc-blocks/', import.meta.url);
const guides = [
  'README.md',
  ...readdirSync(new URL('docs/', root))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** Every `ts run` block of one markdown file. */
function programsOf(doc: string, markdown: string): Program[] {
  const lines = markdown.split('\n');
  const programs: Program[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\S*)(.*)$/.exec(lines[i]!);
    if (fence === null) continue;
    const end = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
    if (end === -1) throw new Error(`${doc}:${i + 1}: a code block that never closes`);
    const info = `${fence[2]}${fence[3]}`.trim().split(/\s+/);
    if (info.includes('run')) {
      if (info[0] !== 'ts') throw new Error(`${doc}:${i + 1}: only ts blocks can be marked run, got ${info[0]}`);
      const file = `${doc.replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '_')}_L${i + 1}.ts`;
      const code = lines.slice(i + 1, end).map((l) => l.slice(fence[1]!.length));
      programs.push({ doc, line: i + 1, code: `${code.join('\n')}\n`, file });
    }
    i = end;
  }
  return programs;
}

const programs = guides.flatMap((doc) => programsOf(doc, readFileSync(new URL(doc, root), 'utf8')));

/** tsc's `file(line,col): error …` lines, pointing at the guide's own line instead. */
function inGuides(output: string): string {
  return output.replace(/^(\w+_L\d+\.ts)\((\d+),(\d+)\)/gm, (whole, file: string, line: string, col: string) => {
    const p = programs.find((q) => q.file === file);
    return p === undefined ? whole : `${p.doc}:${p.line + Number(line)}:${col}`;
  });
}

beforeAll(() => {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const p of programs) writeFileSync(new URL(p.file, out), p.code);
  const tsconfig = {
    extends: '../../tsconfig.base.json',
    compilerOptions: {
      composite: false,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
      emitDeclarationOnly: false,
      noEmit: true,
      incremental: false,
      rootDir: '.',
      // Every block is its own module, with or without imports.
      moduleDetection: 'force',
    },
    include: ['*.ts'],
  };
  writeFileSync(new URL('tsconfig.json', out), JSON.stringify(tsconfig, null, 2));
});

afterAll(() => {
  rmSync(out, { recursive: true, force: true });
});

describe('the programs in the guides', () => {
  it('there are some: the marker is in use', () => {
    expect(programs.length).toBeGreaterThanOrEqual(13);
  });

  it('type-check under the strict settings', { timeout: 300_000 }, () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: fileURLToPath(out),
      encoding: 'utf8',
    });
    expect(inGuides(`${run.stdout}${run.stderr}`)).toBe('');
    expect(run.status).toBe(0);
  });

  for (const p of programs) {
    it(`${p.doc}:${p.line} runs`, { timeout: 60_000 }, async () => {
      const log = console.log;
      console.log = () => undefined; // the programs print what the guide shows; the page is the check
      try {
        await import(/* @vite-ignore */ new URL(p.file, out).href);
      } finally {
        console.log = log;
      }
    });
  }
});
