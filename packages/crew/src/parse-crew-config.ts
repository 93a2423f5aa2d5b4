import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import {
  configFilePath,
  configProblemsFromZod,
  configSizeProblem,
  errorText,
  formatConfigPath,
  sortConfigProblems,
} from '@signalyard/core/internal';
import {
  LineCounter,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseDocument,
  visit as visitYaml,
  type Document,
  type YAMLError,
} from 'yaml';
import type { CrewConfig } from './crew-config.js';
import { AT_KEY, crewConfigSchema } from './crew-config-schema.js';

/** Options of {@link parseCrewConfig}. */
export interface ParseCrewConfigOptions {
  /** The file the text came from, for `ConfigError.file` and its message. */
  readonly file?: string;
}

/**
 * Parses and validates crew.yaml text (see `crewConfigSchema` for the rules) into a
 * {@link CrewConfig} with every default filled in.
 *
 * @throws ConfigError (`CONFIG_INVALID`) listing **every** problem, each with its YAML path
 * (`routing.signals.teacher[1].target`) and the 1-based line (and column) of the offending key
 * or value itself, sorted by line. A YAML syntax error is a `ConfigError` too, with its line; so
 * are options that are not `{ file?: string }`.
 *
 * @example
 * ```ts
 * const crew = parseCrewConfig(`
 * entry_point: teacher
 * agents:
 *   - id: teacher
 *   - id: student
 * routing:
 *   signals:
 *     teacher: [{ signal: "[ASK]", target: student }]
 *     student: [{ signal: "[DONE]", target: "" }]
 * `);
 * crew.routing.signals.teacher[0].target;   // 'student'
 * crew.settings.maxHandoffs;                // 5
 * ```
 */
export function parseCrewConfig(yaml: string, options: ParseCrewConfigOptions = {}): CrewConfig {
  const given: unknown = options;
  const rawFile: unknown = typeof given === 'object' && given !== null ? (given as { file?: unknown }).file : undefined;
  if (typeof given !== 'object' || given === null || (rawFile !== undefined && typeof rawFile !== 'string')) {
    throw new ConfigError({
      problems: [
        typeof given !== 'object' || given === null
          ? { path: '', message: `expected options { file? }, got ${describeValue(given)}` }
          : { path: '', message: `options.file must be a string naming the file, got ${describeValue(rawFile)}` },
      ],
    });
  }
  const file = rawFile;
  const fail = (problems: ConfigProblem[], cause?: unknown): never => {
    throw new ConfigError({
      problems,
      ...(file === undefined ? {} : { file }),
      ...(cause === undefined ? {} : { cause }),
    });
  };
  if (typeof yaml !== 'string') return fail([{ path: '', message: `expected YAML text, got ${describeValue(yaml)}` }]);
  const tooLarge = configSizeProblem(yaml);
  if (tooLarge !== undefined) return fail([tooLarge]);

  const lineCounter = new LineCounter();
  // Duplicate keys are found by duplicateKeys (linear); the yaml package's own check compares
  // each key with every earlier one, which makes a large mapping quadratic.
  const doc = parseDocument(yaml, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const syntax = [...doc.errors, ...doc.warnings].map((error) => yamlProblem(error, doc, yaml, lineCounter));
  syntax.push(...duplicateKeys(doc.contents, lineCounter), ...unresolvedAliases(doc.contents, lineCounter));
  if (syntax.length > 0) return fail(syntax.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // e.g. an alias bomb: too many alias expansions
    return fail([{ path: '', message: `cannot read the YAML: ${errorText(error)}` }], error);
  }
  if (doc.contents === null)
    return fail([
      {
        path: '',
        message: 'the document is empty: expected a mapping with entry_point and agents',
        line: 1,
        column: 1,
      },
    ]);

  const result = crewConfigSchema.safeParse(data);
  if (result.success) return result.data;
  const problems = configProblemsFromZod(result.error.issues, {
    position: (path, issue) => {
      const atKey =
        issue.code === 'unrecognized_keys' ||
        (issue.code === 'custom' && (issue.params as { at?: unknown } | undefined)?.at === AT_KEY);
      return locate(doc, path, atKey, lineCounter);
    },
  });
  return fail(sortConfigProblems(problems));
}

/**
 * Reads a crew.yaml file and parses it with {@link parseCrewConfig}.
 *
 * @param path - the file: a path, or a `file:` URL.
 * @throws ConfigError (`CONFIG_INVALID`, with `file` set) for every problem in the file, and
 * when the file cannot be read (the read error as `cause`); (without `file`) naming the value
 * when `path` is neither a non-empty string nor a `file:` URL, before anything is read.
 *
 * @example
 * ```ts
 * const crew = await loadCrewConfig(new URL('./crew.yaml', import.meta.url));
 * ```
 */
export async function loadCrewConfig(path: string | URL): Promise<CrewConfig> {
  const file = configFilePath(path, fileURLToPath, 'a crew.yaml');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    throw new ConfigError({
      file,
      problems: [{ path: '', message: `cannot read the file (${typeof code === 'string' ? code : String(error)})` }],
      cause: error,
    });
  }
  return parseCrewConfig(text, { file });
}

/** Every key that repeats an earlier key of its mapping (at the repeated key), in the whole tree. */
function duplicateKeys(root: unknown, lineCounter: LineCounter): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const stack: unknown[] = [root];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const node = stack.pop();
    if (seen.has(node)) continue;
    seen.add(node);
    if (isMap(node)) {
      const keys = new Set<unknown>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (keys.has(key)) {
          const at = (pair.key as { range?: readonly number[] | null } | null)?.range?.[0];
          const pos = at === undefined ? undefined : lineCounter.linePos(at);
          problems.push({
            path: '',
            message: 'YAML syntax error: Map keys must be unique',
            ...(pos === undefined ? {} : { line: pos.line, column: pos.col }),
          });
        }
        keys.add(key);
        stack.push(pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    }
  }
  return problems;
}

interface Visit {
  readonly node: unknown;
  readonly parent: Visit | undefined;
  readonly seg: PropertyKey | undefined;
}

/**
 * Every alias naming no anchor set before it (`entry_point: *nope`), with its path and line:
 * without this, reading the document fails on the first one with no line. One pass in document
 * order, as the yaml package resolves aliases (the nearest anchor before the alias).
 */
function unresolvedAliases(root: unknown, lineCounter: LineCounter): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const anchors = new Set<string>();
  const stack: Visit[] = [{ node: root, parent: undefined, seg: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const node = visit.node;
    if (isAlias(node)) {
      if (!anchors.has(node.source)) problems.push(aliasProblem(visit, node, lineCounter));
      continue;
    }
    const anchor = (node as { anchor?: unknown } | null)?.anchor;
    if (typeof anchor === 'string') anchors.add(anchor);
    const children: Visit[] = [];
    if (isMap(node)) {
      for (const pair of node.items) {
        const seg = isScalar(pair.key) ? String(pair.key.value) : undefined;
        children.push({ node: pair.key, parent: visit.parent, seg: visit.seg });
        children.push({ node: pair.value, parent: visit, seg });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => children.push({ node: item, parent: visit, seg: i }));
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Visit);
  }
  return problems;
}

function aliasProblem(
  visit: Visit,
  alias: { source: string; range?: readonly number[] | null },
  lineCounter: LineCounter,
): ConfigProblem {
  const path: PropertyKey[] = [];
  for (let v: Visit | undefined = visit; v !== undefined; v = v.parent) if (v.seg !== undefined) path.unshift(v.seg);
  const at = alias.range?.[0];
  const pos = at === undefined ? undefined : lineCounter.linePos(at);
  return {
    path: formatConfigPath(path),
    message: `unresolved alias *${alias.source}: no anchor &${alias.source} is set before it`,
    ...(pos === undefined ? {} : { line: pos.line, column: pos.col }),
  };
}

/**
 * A YAML syntax error as a problem, at a line the text has. The yaml package reports an
 * unterminated quote where the text ends — after a final line break, that is a line past the
 * end of the file — so such an error is placed where the quoted scalar opens; any other error
 * past the last character is placed on the last line that has one.
 */
function yamlProblem(error: YAMLError, doc: Document, text: string, lineCounter: LineCounter): ConfigProblem {
  const offset = (error.code === 'MISSING_CHAR' ? unclosedQuoteStart(doc, error.pos[0]) : undefined) ?? error.pos[0];
  const { line, col } = lineCounter.linePos(Math.min(offset, lastCharOffset(text)));
  return {
    path: '',
    message: `YAML ${error.name === 'YAMLWarning' ? 'warning' : 'syntax error'}: ${error.message}`,
    line,
    column: col,
  };
}

/** Where the quoted scalar that runs up to `offset` opens (its opening quote), if there is one. */
function unclosedQuoteStart(doc: Document, offset: number): number | undefined {
  let start: number | undefined;
  visitYaml(doc, {
    Scalar(_, node) {
      const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
      if (quoted && node.range !== undefined && node.range !== null) {
        if (node.range[0] <= offset && offset <= node.range[1]) start = node.range[0];
      }
    },
  });
  return start;
}

/** The offset of the text's last character that is not a line break (0 for an empty text). */
function lastCharOffset(text: string): number {
  let end = text.length - 1;
  while (end > 0 && (text[end] === '\n' || text[end] === '\r')) end--;
  return Math.max(end, 0);
}

const pairIndex = new WeakMap<object, Map<string, { key: unknown; value: unknown }>>();

/** A mapping's pairs by key (the first of equal keys), built once per mapping: locating every problem stays linear. */
function pairsOf(map: {
  items: readonly { key: unknown; value: unknown }[];
}): Map<string, { key: unknown; value: unknown }> {
  let index = pairIndex.get(map);
  if (index === undefined) {
    index = new Map();
    for (const pair of map.items) {
      if (!isScalar(pair.key)) continue;
      const key = String(pair.key.value);
      if (!index.has(key)) index.set(key, pair);
    }
    pairIndex.set(map, index);
  }
  return index;
}

/**
 * The line and column of the node at `path`: the key itself when `atKey`, else the value (the
 * key when the value is empty). A path that leaves the document (a missing key) points at the
 * closest mapping or list that exists.
 */
function locate(
  doc: Document,
  path: readonly PropertyKey[],
  atKey: boolean,
  lineCounter: LineCounter,
): { line: number; column: number } | undefined {
  let node: unknown = doc.contents;
  let best: unknown = node;
  for (let i = 0; i < path.length; i++) {
    if (isAlias(node)) node = node.resolve(doc);
    const seg = path[i];
    if (isMap(node)) {
      const pair = pairsOf(node).get(String(seg));
      if (pair === undefined) break;
      const last = i === path.length - 1;
      const value = pair.value;
      const empty = value === null || (isScalar(value) && value.value === null && value.source === '');
      best = (last && atKey) || empty ? pair.key : value;
      node = value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined) break;
      best = item;
      node = item;
    } else {
      break;
    }
  }
  const range = (best as { range?: readonly number[] | null } | null)?.range;
  if (range?.[0] === undefined) return undefined;
  const { line, col } = lineCounter.linePos(range[0]);
  return { line, column: col };
}
