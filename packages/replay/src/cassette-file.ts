import { readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describeValue, isSignalKind } from '@signalyard/core';
import { configProblemsFromZod, errorText } from '@signalyard/core/internal';
import * as z from 'zod';
import type { Cassette } from './cassette.js';
import { ReplayError } from './errors/replay-error.js';

const PARTIAL_REASONS = [
  'payload_missing',
  'pipeline_stage_calls',
  'parallel_members',
  'before_kept_versions',
  'history_trimmed',
] as const;

const toolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.unknown() });

const summarySchema = z.object({
  status: z.enum(['completed', 'stopped', 'rejected', 'unrouted', 'paused', 'failed']),
  route: z.object({ tier: z.enum(['strategy', 'agent', 'plugin']), name: z.string() }).optional(),
  action: z.string().optional(),
  handoffs: z.array(z.object({ from: z.string(), to: z.string(), signal: z.string() })),
  toolCalls: z.array(z.object({ agentId: z.string().optional(), name: z.string(), arguments: z.unknown() })),
  approvals: z.array(
    z.object({ tool: z.string(), decision: z.enum(['allow', 'deny', 'ask']), rule: z.string().optional() }),
  ),
  reply: z.string().optional(),
  fsmState: z.string().optional(),
});

const turnSchema = z.strictObject({
  signal: z.object({
    kind: z.string().refine(isSignalKind, { error: 'is not a signal kind' }),
    payload: z.unknown(),
  }),
  expected: summarySchema,
  modelCalls: z.array(
    z.strictObject({
      agentId: z.string().optional(),
      request: z.strictObject({ hash: z.string() }).optional(),
      response: z.object({ content: z.string(), toolCalls: z.array(toolCallSchema).optional() }),
    }),
  ),
  toolResults: z.array(
    z.strictObject({ name: z.string(), arguments: z.unknown(), result: z.unknown(), error: z.string().optional() }),
  ),
  at: z.iso.datetime().optional(),
  version: z.number().int().min(1).optional(),
  partial: z.strictObject({ reason: z.enum(PARTIAL_REASONS) }).optional(),
});

/** The zod schema every cassette is checked with on load (`v: 1`; unknown keys refused). */
export const cassetteSchema: z.ZodType<Cassette> = z.strictObject({
  v: z.literal(1),
  sessionKey: z.string().min(1),
  agentId: z.string().min(1),
  recordedAt: z.iso.datetime(),
  source: z.enum(['store', 'recorder']),
  turns: z.array(turnSchema),
  initial: z
    .looseObject({
      v: z.literal(1),
      agentId: z.string(),
      strategy: z.looseObject({ type: z.string() }),
      history: z.array(z.unknown()),
      engine: z.unknown(),
    })
    .optional(),
}) as z.ZodType as z.ZodType<Cassette>; // the checked outline: history entries and payloads stay `unknown` here

/**
 * Checks `value` against the cassette format (`v: 1`) and returns it as a {@link Cassette}.
 * @throws ReplayError `REPLAY_CASSETTE_INVALID` listing every problem with its path (and `file`
 * when given).
 */
export function parseCassette(value: unknown, file?: string): Cassette {
  const parsed = cassetteSchema.safeParse(value);
  if (parsed.success) return value as Cassette;
  const problems = configProblemsFromZod(parsed.error.issues).map(
    (p) => `${p.path === '' ? '(root)' : p.path}: ${p.message}`,
  );
  const where = file === undefined ? 'The cassette' : `Cassette ${JSON.stringify(file)}`;
  throw new ReplayError({
    code: 'REPLAY_CASSETTE_INVALID',
    message: `${where} is not a v1 cassette: ${problems.join('; ')}`,
    ...(file !== undefined && { file }),
  });
}

/**
 * Reads cassettes from files and folders (a folder: every `*.json` file in it, in name order).
 * @throws ReplayError `REPLAY_CASSETTE_UNREADABLE` for a missing path, a file that is not JSON
 * or a folder without cassettes; `REPLAY_CASSETTE_INVALID` for a file that is not a cassette.
 */
export async function loadCassettes(paths: string | readonly string[]): Promise<Cassette[]> {
  const list = pathList(paths);
  const files: string[] = [];
  for (const path of list) files.push(...(await cassetteFiles(path)));
  const cassettes: Cassette[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw unreadable(`Cannot read cassette ${JSON.stringify(file)}: ${errorText(error)}`, file);
    }
    cassettes.push(parseCassette(jsonOf(text, file), file));
  }
  return cassettes;
}

/**
 * {@link loadCassettes}, synchronously: for test files that declare one test per cassette while
 * they are collected (`describeCassettes`). Same errors.
 */
export function loadCassettesSync(paths: string | readonly string[]): Cassette[] {
  const list = pathList(paths);
  const files: string[] = [];
  for (const path of list) {
    let dir: boolean;
    try {
      dir = statSync(path).isDirectory();
    } catch (error) {
      throw unreadable(`Cannot read ${JSON.stringify(path)}: ${errorText(error)}`, path);
    }
    files.push(...(dir ? folderFiles(path, readdirSync(path)) : [path]));
  }
  return files.map((file) => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw unreadable(`Cannot read cassette ${JSON.stringify(file)}: ${errorText(error)}`, file);
    }
    return parseCassette(jsonOf(text, file), file);
  });
}

/** `paths` as a non-empty list of paths. */
function pathList(paths: unknown): readonly string[] {
  const list: unknown = typeof paths === 'string' ? [paths] : paths;
  if (!Array.isArray(list) || list.length === 0 || list.some((p) => typeof p !== 'string'))
    throw unreadable(`loadCassettes needs a path or a list of paths, got ${describeValue(paths)}`);
  return list as readonly string[];
}

function jsonOf(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw unreadable(`Cassette ${JSON.stringify(file)} is not JSON: ${errorText(error)}`, file);
  }
}

function folderFiles(path: string, names: readonly string[]): string[] {
  const cassettes = names.filter((n) => n.endsWith('.json')).sort();
  if (cassettes.length === 0)
    throw unreadable(`Folder ${JSON.stringify(path)} holds no cassettes (*.json files)`, path);
  return cassettes.map((n) => join(path, n));
}

async function cassetteFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw unreadable(`Cannot read ${JSON.stringify(path)}: ${errorText(error)}`, path);
  }
  if (!info.isDirectory()) return [path];
  return folderFiles(path, await readdir(path));
}

function unreadable(message: string, file?: string): ReplayError {
  return new ReplayError({ code: 'REPLAY_CASSETTE_UNREADABLE', message, ...(file !== undefined && { file }) });
}

/**
 * The file name a session's cassette is written under: the session key with every character
 * other than letters, digits, `.`, `_` and `-` written as `%XX` (UTF-8), then `.json` — distinct
 * keys never share a file.
 */
export function cassetteFileName(sessionKey: string): string {
  return `${encodeURIComponent(sessionKey).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}.json`;
}

/**
 * Writes cassettes into `dir` (created when missing), one `<session key>.json` file each (see
 * {@link cassetteFileName}), pretty-printed; returns the paths written.
 */
export async function saveCassettes(dir: string, cassettes: readonly Cassette[]): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const cassette of cassettes) {
    const file = join(dir, cassetteFileName(cassette.sessionKey));
    await writeFile(file, `${JSON.stringify(cassette, null, 2)}\n`);
    written.push(file);
  }
  return written;
}
