import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describeValue, type ChatResponse } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import { ReplayError } from './errors/replay-error.js';

/**
 * A judge cassette on disk: `{ v: 1, calls: { <request hash>: { response } } }` — the responses
 * an LLM judge's model gave, keyed by the hash of the request it answered (`requestHash`).
 */
interface JudgeCassetteFile {
  readonly v: 1;
  readonly calls: Readonly<Record<string, { readonly response: ChatResponse }>>;
}

/** Writes to one file are chained in this process: an append never loses another's entry. */
const chains = new Map<string, Promise<unknown>>();

/**
 * The judge cassette at `file`: its calls by hash (none when the file does not exist yet).
 * @throws ReplayError `REPLAY_CASSETTE_UNREADABLE` (not readable, not JSON) or
 * `REPLAY_CASSETTE_INVALID` (not a judge cassette), naming the file.
 * @internal
 */
export async function readJudgeCassette(file: string): Promise<Map<string, ChatResponse>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return new Map();
    throw unreadable(file, `Cannot read the judge cassette ${file}: ${errorText(error)}`, error);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw unreadable(file, `The judge cassette ${file} is not JSON: ${errorText(error)}`, error);
  }
  const problem = judgeFileProblem(data);
  if (problem !== undefined)
    throw new ReplayError({
      code: 'REPLAY_CASSETTE_INVALID',
      file,
      message: `The judge cassette ${file} is not one: ${problem} (expected { v: 1, calls: { <hash>: { response: { content } } } })`,
    });
  const calls = (data as JudgeCassetteFile).calls;
  return new Map(Object.entries(calls).map(([hash, call]) => [hash, call.response]));
}

/**
 * Adds `response` under `hash` to the judge cassette at `file` (created with its folder when
 * missing): re-read, merged and written atomically (a temporary file renamed over it), one write
 * at a time per file in this process.
 * @throws ReplayError `REPLAY_JUDGE_FAILED` when the file cannot be written; what
 * {@link readJudgeCassette} throws.
 * @internal
 */
export function appendJudgeCall(file: string, hash: string, response: ChatResponse): Promise<void> {
  const previous = chains.get(file) ?? Promise.resolve();
  const next = previous
    .catch(() => undefined)
    .then(async () => {
      const calls = await readJudgeCassette(file);
      calls.set(hash, response);
      const sorted = [...calls].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const data: JudgeCassetteFile = {
        v: 1,
        calls: Object.fromEntries(sorted.map(([h, r]) => [h, { response: r }])),
      };
      const tmp = `${file}.${randomUUID()}.tmp`;
      try {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(tmp, `${JSON.stringify(data, null, 2)}\n`);
        await rename(tmp, file);
      } catch (error) {
        await rm(tmp, { force: true }).catch(() => undefined);
        throw new ReplayError({
          code: 'REPLAY_JUDGE_FAILED',
          file,
          message: `Cannot write the judge cassette ${file}: ${errorText(error)}`,
          cause: error,
        });
      }
    });
  chains.set(file, next);
  void next
    .finally(() => {
      if (chains.get(file) === next) chains.delete(file);
    })
    .catch(() => undefined);
  return next;
}

function unreadable(file: string, message: string, cause: unknown): ReplayError {
  return new ReplayError({ code: 'REPLAY_CASSETTE_UNREADABLE', file, message, cause });
}

function judgeFileProblem(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'not an object';
  const d = data as { v?: unknown; calls?: unknown };
  if (d.v !== 1) return `v is ${describeValue(d.v)}`;
  if (typeof d.calls !== 'object' || d.calls === null || Array.isArray(d.calls)) return 'calls is not an object';
  for (const [hash, call] of Object.entries(d.calls)) {
    const content = (call as { response?: { content?: unknown } } | null)?.response?.content;
    if (typeof content !== 'string') return `calls[${JSON.stringify(hash)}].response.content is not a string`;
  }
  return undefined;
}
