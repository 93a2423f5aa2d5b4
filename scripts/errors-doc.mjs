// Generates docs/errors.md from the error-code unions in packages/*/src/errors/*.ts.
//
// Convention (see CONTRIBUTING.md): each error class `FooError` lives in `src/errors/foo-error.ts`
// next to an exported union `FooErrorCode`, and every member of the union carries a doc comment
// `/** <what causes it>. Fix: <what to do>. */`. Each code has one owner class: the one whose
// union declares it. A subclass that keeps its parent's codes (a ConfigError subclass keeps
// CONFIG_INVALID) says so with an alias, `export type FooErrorCode = ParentErrorCode`: it owns
// nothing, and the page names it beside its parent. The exceptions are codes a package's run
// error may carry besides their owner, with the owner's error as its `cause` (its explanation
// says so): ABORTED (AbortedError), and MCP_SERVER_UNKNOWN / MCP_CONFIG_INVALID (McpError, for a
// crew run whose MCP views fail) — see `CARRIED` and `ownershipProblems`.
//
//   node scripts/errors-doc.mjs          writes docs/errors.md
//   node scripts/errors-doc.mjs --check  exits 1 when docs/errors.md is stale
import { readFileSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'docs', 'errors.md');

/**
 * Every error code found, as `{ pkg, code, classes, cause, fix, file }`, sorted by package then code.
 * Throws when a union member has no doc comment or no `Fix:` part (every code must be explained).
 */
export function collectErrorCodes() {
  return collect().rows;
}

/** Subclass names by the parent class whose codes they keep (from `export type XErrorCode = YErrorCode`). */
export function collectSubclasses() {
  return collect().subclasses;
}

function collect() {
  const rows = new Map();
  const subclasses = new Map();
  const packagesDir = join(root, 'packages');
  for (const folder of readdirSync(packagesDir).sort()) {
    const errorsDir = join(packagesDir, folder, 'src', 'errors');
    const manifest = join(packagesDir, folder, 'package.json');
    if (!existsSync(errorsDir) || !existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')).name;
    for (const name of readdirSync(errorsDir).sort()) {
      if (!name.endsWith('.ts')) continue;
      const file = join(errorsDir, name);
      const { codes, keeps } = codesInFile(file);
      for (const { className, parent } of keeps) {
        subclasses.set(parent, [...(subclasses.get(parent) ?? []), className]);
      }
      for (const found of codes) {
        const key = `${pkg}\0${found.code}`;
        const row = rows.get(key);
        if (row === undefined) {
          rows.set(key, { pkg, ...found, classes: [found.className], file: relative(file) });
        } else {
          row.classes.push(found.className);
          // The first class's explanation stands; a subclass may repeat it.
        }
      }
    }
  }
  return {
    rows: [...rows.values()].sort((a, b) => (a.pkg === b.pkg ? cmp(a.code, b.code) : cmp(a.pkg, b.pkg))),
    subclasses,
  };
}

/**
 * The codes a second class may carry besides their owner, with the owner: a package's run error
 * carrying the owner's error as its `cause` (ABORTED: the AbortedError; a crew run failing on its
 * MCP client's unknown server or clashing tool names: the McpError).
 */
const CARRIED = new Map([
  ['ABORTED', 'AbortedError'],
  ['MCP_SERVER_UNKNOWN', 'McpError'],
  ['MCP_CONFIG_INVALID', 'McpError'],
]);

/**
 * What breaks "one owner class per code": every code two classes declare (in one package or
 * across packages), as `CODE: ClassA (pkg), ClassB (pkg)`. The codes of `CARRIED` are the ones a
 * second class may declare — a package's run error that carries the owner's error as its
 * `cause` — and then only when its explanation says so (names the owner class and `cause`), and
 * only besides the owner itself.
 */
export function ownershipProblems(rows = collectErrorCodes()) {
  const owners = new Map();
  for (const row of rows) {
    for (const className of row.classes) {
      owners.set(row.code, [...(owners.get(row.code) ?? []), { ...row, className }]);
    }
  }
  const problems = [];
  for (const [code, list] of owners) {
    if (list.length < 2) continue;
    const owner = CARRIED.get(code);
    if (owner !== undefined) {
      const others = list.filter((o) => o.className !== owner);
      const carries = (o) => new RegExp(`\\b${owner}\\b`).test(o.cause) && /\bcause\b/.test(o.cause);
      if (others.length === list.length - 1 && others.every(carries)) continue;
    }
    problems.push(`${code}: ${list.map((o) => `${o.className} (${o.pkg})`).join(', ')}`);
  }
  return problems;
}

function codesInFile(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out = [];
  const keeps = [];
  for (const statement of source.statements) {
    if (!ts.isTypeAliasDeclaration(statement)) continue;
    const alias = statement.name.text;
    if (!alias.endsWith('ErrorCode')) continue;
    const exported = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    const className = alias.slice(0, -'Code'.length);
    const target = statement.type;
    if (
      ts.isTypeReferenceNode(target) &&
      ts.isIdentifier(target.typeName) &&
      target.typeName.text.endsWith('ErrorCode')
    ) {
      // A subclass keeping its parent's codes: it owns none.
      keeps.push({ className, parent: target.typeName.text.slice(0, -'Code'.length) });
      continue;
    }
    const members = ts.isUnionTypeNode(statement.type) ? statement.type.types : [statement.type];
    for (const member of members) {
      if (!ts.isLiteralTypeNode(member) || !ts.isStringLiteral(member.literal)) {
        throw new Error(`${relative(file)}: ${alias} has a member that is not a string literal: ${member.getText()}`);
      }
      const code = member.literal.text;
      const doc = leadingDoc(text, member);
      if (doc === undefined) throw new Error(`${relative(file)}: ${alias} member '${code}' has no /** doc comment */`);
      const at = doc.search(/\bFix:/);
      if (at === -1) throw new Error(`${relative(file)}: the doc comment of '${code}' in ${alias} has no "Fix:" part`);
      out.push({ code, className, cause: doc.slice(0, at).trim(), fix: doc.slice(at + 'Fix:'.length).trim() });
    }
  }
  return { codes: out, keeps };
}

/** The text of the last `/** … *\/` comment between the previous union member (or the `=`) and `node`. */
function leadingDoc(text, node) {
  const union = ts.isUnionTypeNode(node.parent) ? node.parent : undefined;
  const index = union === undefined ? -1 : union.types.indexOf(node);
  const from = index > 0 ? union.types[index - 1].end : text.lastIndexOf('=', node.getStart());
  const gap = text.slice(from, node.getStart());
  const match = [...gap.matchAll(/\/\*\*([\s\S]*?)\*\//g)].at(-1);
  if (match === undefined) return undefined;
  return match[1]
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').trim())
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function relative(file) {
  return file.slice(root.length + 1);
}

function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Markdown for one table cell: no line breaks, pipes escaped. */
function cell(text) {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The whole docs/errors.md page. */
export function renderErrorsDoc(rows = collectErrorCodes(), subclasses = collectSubclasses()) {
  const classCell = (r) =>
    r.classes
      .map((c) => {
        const kept = subclasses.get(c);
        return kept === undefined
          ? `\`${c}\``
          : `\`${c}\` (and its subclass${kept.length === 1 ? '' : 'es'} ${kept.map((k) => `\`${k}\``).join(', ')})`;
      })
      .join(', ');
  const packages = [...new Set(rows.map((r) => r.pkg))];
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated by `node scripts/errors-doc.mjs` from the error-code unions in packages/*/src/errors/. Do not edit by hand: a test fails when this page is stale. -->',
    '',
    'Every error Signalyard throws or reports in an `Outcome` is a `SignalyardError` with a stable `code`:',
    'switch on the code, not on the message (messages are for people and may change). Each error class owns a',
    'typed union of its codes, so `switch (error.code)` is checked by the compiler, and `Class.isInstance(error)`',
    'recognises an error even across two installed copies of a package.',
    '',
    '```ts',
    "import { isSignalyardError } from '@signalyard/core';",
    '',
    "if (isSignalyardError(outcome.error, 'CHECKPOINT_CONFLICT')) {",
    '  // another runner saved first',
    '}',
    '```',
    '',
    `All ${rows.length} codes, by package:`,
    '',
    ...packages.map((p) => `- [\`${p}\`](#${anchor(p)})`),
    '',
    '## Index',
    '',
    [...rows]
      .sort((a, b) => cmp(a.code, b.code))
      .map((r) => `\`${r.code}\``)
      .filter((c, i, all) => all.indexOf(c) === i)
      .join(' · '),
    '',
  ];
  for (const pkg of packages) {
    lines.push(`## ${pkg}`, '', '| code | class | what causes it | what to do |', '|---|---|---|---|');
    for (const r of rows.filter((row) => row.pkg === pkg)) {
      lines.push(`| \`${r.code}\` | ${classCell(r)} | ${cell(r.cause)} | ${cell(r.fix)} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

function anchor(pkg) {
  return pkg
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
}

const invoked = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (invoked) {
  const page = renderErrorsDoc();
  if (process.argv.includes('--check')) {
    const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
    if (current !== page) {
      console.error('docs/errors.md is stale: run `node scripts/errors-doc.mjs`');
      process.exit(1);
    }
  } else {
    writeFileSync(target, page);
    console.log(`docs/errors.md: ${collectErrorCodes().length} codes`);
  }
}
