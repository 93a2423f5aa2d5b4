// `pnpm lint` step: no import cycles between the files of any package — runtime or type-only (a
// type-only cycle still tangles what a reader must understand together). Every static import and
// re-export of every `packages/*/src` file is read with the TypeScript compiler's parser, and
// the strongly connected components of the file graph are reported (Tarjan). (dpdm does the same,
// but its pnpm install here lacks its tslib dependency; this needs nothing beyond TypeScript.)
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Every .ts file under `dir`. */
function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The relative imports and re-exports of `file`, resolved to files. */
function importsOf(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out = [];
  for (const statement of source.statements) {
    const spec = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
    const target = resolve(dirname(file), spec.text.replace(/\.js$/, '.ts'));
    if (existsSync(target)) out.push(target);
  }
  return out;
}

/** Cycles: the strongly connected components with more than one file (or a file importing itself). */
export function findCycles(files) {
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.reverse());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return cycles;
}

const invoked =
  process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname);
if (invoked) main();

function main() {
  const files = readdirSync('packages')
    .map((p) => join('packages', p, 'src'))
    .filter((dir) => existsSync(dir))
    .flatMap((dir) => sources(resolve(dir)));
  const cycles = findCycles(files);
  if (cycles.length > 0) {
    console.error(
      `Import cycles (${cycles.length}); break each along its real seam (e.g. move shared types into a file of their own):`,
    );
    for (const c of cycles) console.error(`  ${c.map((f) => relative(process.cwd(), f)).join(' -> ')}`);
    process.exit(1);
  }
  console.log(`no import cycles among ${files.length} source files`);
}
