import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ConfigError, describeValue, type ConfigProblem } from '@signalyard/core';
import {
  configFilePath,
  configSizeProblem,
  errorText,
  formatConfigPath,
  sortConfigProblems,
} from '@signalyard/core/internal';
import { parse, TomlError } from 'smol-toml';
import { routingConfigSchema, routingProblems, type RoutingConfig } from './routing-config.js';
import { lineOf, locateTomlKeys, type KeyLines } from './toml-key-lines.js';

type Seg = string | number;

/** The TOML layout: which snake_case key maps to which code-form key, and what lies beneath. */
type Layout =
  | { readonly type: 'table'; readonly keys: ReadonlyMap<string, readonly [string, Layout]> }
  | { readonly type: 'array'; readonly item: Layout }
  | { readonly type: 'record' }
  | { readonly type: 'value' };

const VALUE: Layout = { type: 'value' };
const table = (entries: [string, string, Layout][]): Layout => ({
  type: 'table',
  keys: new Map(entries.map(([toml, code, layout]) => [toml, [code, layout] as const])),
});

const PEER = table([
  ['kind', 'kind', VALUE],
  ['id', 'id', VALUE],
]);
const MATCH = table([
  ['channel', 'channel', VALUE],
  ['account_id', 'accountId', VALUE],
  ['peer', 'peer', PEER],
  ['guild_id', 'guildId', VALUE],
  ['team_id', 'teamId', VALUE],
]);
const BINDING = table([
  ['agent_id', 'agentId', VALUE],
  ['match', 'match', MATCH],
]);
const SESSION = table([
  ['dm_scope', 'dmScope', VALUE],
  ['case_sensitive_channels', 'caseSensitiveChannels', VALUE],
  ['identity_links', 'identityLinks', { type: 'record' }],
]);
const ROUTING = table([
  ['default_agent', 'defaultAgentId', VALUE],
  ['session', 'session', SESSION],
  ['bindings', 'bindings', { type: 'array', item: BINDING }],
]);

/**
 * Every key of the routing TOML, as dotted paths from the top of the file: `[]` marks the items
 * of an array of tables, `*` the entries of a map. For tooling and documentation (the project's
 * configuration reference is tested against it), e.g. `routing.default_agent`,
 * `routing.bindings[].match.peer.id`, `routing.session.identity_links.*`.
 */
export function routingTomlKeyPaths(): readonly string[] {
  const out: string[] = [];
  const walk = (layout: Layout, path: string): void => {
    out.push(path);
    if (layout.type === 'table') for (const [key, [, child]] of layout.keys) walk(child, `${path}.${key}`);
    else if (layout.type === 'array') walk(layout.item, `${path}[]`);
    else if (layout.type === 'record') out.push(`${path}.*`);
  };
  walk(ROUTING, 'routing');
  return out;
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** Own property read that can never reach a prototype. */
function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

/**
 * Maps the parsed TOML (snake_case) to the code form (camelCase), reporting unknown keys
 * (including `__proto__` and `constructor`) instead of copying them. Values that do not fit the
 * layout are passed through for the schema to report.
 */
function translate(value: unknown, layout: Layout, path: Seg[], problems: { path: Seg[]; message: string }[]): unknown {
  if (layout.type === 'table' && isTable(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const entry = layout.keys.get(key);
      if (entry === undefined) {
        problems.push({
          path: [...path, key],
          message: `unknown key ${describeValue(key)} (expected ${[...layout.keys.keys()].map((k) => `"${k}"`).join(', ')})`,
        });
        continue;
      }
      out[entry[0]] = translate(own(value, key), entry[1], [...path, key], problems);
    }
    return out;
  }
  if (layout.type === 'array' && Array.isArray(value)) {
    return value.map((item: unknown, i) => translate(item, layout.item, [...path, i], problems));
  }
  if (layout.type === 'record' && isTable(value)) {
    // Names are user data: copy every own key as an own property, `__proto__` included, so the
    // schema sees (and rejects) reserved names instead of them vanishing or reaching a prototype.
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, { value: own(value, key), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/** Maps a code-form path back to the TOML's keys (`bindings[2].match.accountId` → `routing.bindings[2].match.account_id`). */
function tomlPath(path: readonly PropertyKey[]): PropertyKey[] {
  const out: PropertyKey[] = ['routing'];
  let layout: Layout | undefined = ROUTING;
  for (const seg of path) {
    if (layout?.type === 'table' && typeof seg === 'string') {
      let next: Layout | undefined;
      let name = seg;
      for (const [toml, [code, child]] of layout.keys) {
        if (code === seg) {
          name = toml;
          next = child;
        }
      }
      out.push(name);
      layout = next;
    } else if (layout?.type === 'array' && typeof seg === 'number') {
      out.push(seg);
      layout = layout.item;
    } else {
      out.push(seg);
      layout = layout?.type === 'record' ? VALUE : undefined;
    }
  }
  return out;
}

/**
 * Parses and validates a routing TOML document (the `[routing]` layout in the sessions guide)
 * into a {@link RoutingConfig} with defaults filled in.
 *
 * @throws ConfigError (`CONFIG_INVALID`) listing **every** problem, each with its TOML path
 *   (`routing.bindings[2].match.peer.id`) and line: TOML syntax errors (with the parser's line
 *   and column), unknown keys, non-canonical agent ids, bare identity-link entries, one entry
 *   linked to two names, peers missing kind or id, peer bindings without a channel, dead
 *   duplicate bindings.
 * @example
 * ```ts
 * const config = parseRoutingConfig(`
 * [routing]
 * default_agent = "main"
 * [[routing.bindings]]
 * agent_id = "general"
 * [routing.bindings.match]
 * channel = "telegram"
 * `);
 * config.bindings[0];  // { agentId: 'general', match: { channel: 'telegram' } }
 * ```
 */
export function parseRoutingConfig(toml: string): RoutingConfig {
  return parseWithFile(toml, undefined);
}

/**
 * Where a syntax error is: the parser's line and column, except that an error the parser finds
 * where the text ends (an unclosed array or table, say) is reported at the end of the last line
 * that has text, never on a line past the end of the file.
 */
function tomlErrorPosition(error: TomlError, text: string): { line: number; column: number } {
  const lines = text.split('\n');
  let last = lines.length;
  while (last > 1 && (lines[last - 1] ?? '').trim() === '') last--;
  if (error.line <= last) return { line: error.line, column: error.column };
  return { line: last, column: (lines[last - 1] ?? '').replace(/\r$/, '').length + 1 };
}

/**
 * The parser's message, first line only, without its prefix. A one-line string that reaches the
 * end of its line unclosed is reported by the parser as a control character (the line break)
 * inside a string: it is called what it is, an unterminated string.
 */
function tomlErrorText(error: TomlError, text: string): string {
  const message = (error.message.split('\n')[0] ?? error.message).replace(/^Invalid TOML document: /, '');
  const line = text.split('\n')[error.line - 1] ?? '';
  const atEndOfLine = error.column - 1 >= line.replace(/\r$/, '').length;
  if (message.startsWith('control characters') && atEndOfLine) {
    return 'unterminated string: the string opened on this line is not closed before the line ends (only """ and \'\'\' strings span lines)';
  }
  if (message === 'unfinished string') return 'unterminated string: the string opened on this line is never closed';
  return message;
}

function parseWithFile(toml: string, file: string | undefined): RoutingConfig {
  if (typeof toml !== 'string') {
    throw new ConfigError({
      file,
      problems: [{ path: '', message: `expected the TOML text as a string, got ${describeValue(toml)}` }],
    });
  }
  const tooLarge = configSizeProblem(toml);
  if (tooLarge !== undefined) throw new ConfigError({ file, problems: [tooLarge] });
  const text = toml.startsWith('\uFEFF') ? toml.slice(1) : toml;
  let doc: Record<string, unknown>;
  try {
    doc = parse(text);
  } catch (error) {
    if (error instanceof TomlError) {
      throw new ConfigError({
        file,
        cause: error,
        problems: [
          {
            path: '',
            message: `TOML syntax error: ${tomlErrorText(error, text)}`,
            ...tomlErrorPosition(error, text),
          },
        ],
      });
    }
    throw new ConfigError({
      file,
      cause: error,
      problems: [{ path: '', message: `cannot parse the TOML: ${String(error)}` }],
    });
  }

  const problems: { path: Seg[]; message: string }[] = [];
  for (const key of Object.keys(doc)) {
    if (key !== 'routing')
      problems.push({
        path: [key],
        message: `unknown key ${describeValue(key)} (a routing file has only a [routing] table)`,
      });
  }
  // Every key is optional: a file without a [routing] table is the default configuration.
  const routing = own(doc, 'routing') ?? {};
  const code = translate(routing, ROUTING, ['routing'], problems);
  const result = routingConfigSchema.safeParse(code, { reportInput: true });
  if (problems.length === 0 && result.success) return result.data;

  let keyLines: KeyLines | undefined;
  const line = (path: readonly PropertyKey[]): number | undefined => lineOf((keyLines ??= locateTomlKeys(text)), path);
  const out: ConfigProblem[] = problems.map((p) => {
    const at = line(p.path);
    const problem = { path: formatConfigPath(p.path), message: p.message };
    return at === undefined ? problem : { ...problem, line: at };
  });
  if (!result.success) {
    out.push(
      ...routingProblems(result.error.issues, {
        mapPath: tomlPath,
        position: (path) => {
          const at = line(path);
          return at === undefined ? undefined : { line: at };
        },
      }),
    );
  }
  // In document order (a stable sort keeps problems on one line in the order found).
  throw new ConfigError({ file, problems: sortConfigProblems(out) });
}

/**
 * Reads a routing TOML file and parses it with {@link parseRoutingConfig}.
 *
 * @param path - the file: a path, or a `file:` URL.
 * @throws ConfigError (`CONFIG_INVALID`, with `file` set) for an unreadable file or any problem
 *   in it; (without `file`) naming the value when `path` is neither a non-empty string nor a
 *   `file:` URL, before anything is read.
 * @example
 * ```ts
 * const resolver = new RouteResolver(await loadRoutingConfig('routing.toml'));
 * const same = await loadRoutingConfig(new URL('./routing.toml', import.meta.url));
 * ```
 */
export async function loadRoutingConfig(path: string | URL): Promise<RoutingConfig> {
  const file = configFilePath(path, fileURLToPath, 'a routing TOML file');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError({
      file,
      cause: error,
      problems: [
        {
          path: '',
          message: `cannot read the routing file: ${errorText(error)}`,
        },
      ],
    });
  }
  return parseWithFile(text, file);
}
