import { describeValue } from '@signalyard/core';
import { UIMessageError } from '../errors/ui-message-error.js';
import { asRecord } from './engine-event-fields.js';
import type { TurnChunkMapperOptions } from './turn-chunk-mapper.js';

const fail = (path: string, problem: string): UIMessageError =>
  new UIMessageError({ code: 'UI_STREAM_ARGUMENT_INVALID', path, problem });

/** Throws unless `turn` is an async iterable. @internal */
export function assertTurn(turn: unknown): asserts turn is AsyncIterable<unknown> {
  const record = typeof turn === 'object' && turn !== null ? (turn as Record<PropertyKey, unknown>) : undefined;
  if (typeof record?.[Symbol.asyncIterator] !== 'function') {
    throw fail(
      'turn',
      `expected an async iterable of TurnEvents (e.g. runner.stream(message)), got ${describeValue(turn)}`,
    );
  }
}

const OPTION_KEYS: ReadonlySet<string> = new Set(['messageId', 'sendRouting', 'includeSignals']);

/**
 * Reads `messageId`, `sendRouting` and `includeSignals` from the options of `toUIMessageStream` (`strict`: no other
 * key allowed) or the init of `toUIMessageStreamResponse` (where the `ResponseInit` keys live too).
 * @internal
 */
export function readUIStreamOptions(value: unknown, path: string, strict: boolean): TurnChunkMapperOptions {
  if (value === undefined) return { sendRouting: true, includeSignals: false };
  const opts = asRecord(value);
  if (opts === undefined) throw fail(path, `expected an options object, got ${describeValue(value)}`);
  if (strict) {
    for (const key of Object.keys(opts)) {
      if (!OPTION_KEYS.has(key)) {
        throw fail(
          `${path}.${key}`,
          `unknown option ${JSON.stringify(key)}: expected "messageId", "sendRouting" or "includeSignals"`,
        );
      }
    }
  }
  const { messageId, sendRouting, includeSignals } = opts;
  if (messageId !== undefined && (typeof messageId !== 'string' || messageId === '')) {
    throw fail(`${path}.messageId`, `expected a non-empty string, got ${describeValue(messageId)}`);
  }
  if (sendRouting !== undefined && typeof sendRouting !== 'boolean') {
    throw fail(`${path}.sendRouting`, `expected a boolean, got ${describeValue(sendRouting)}`);
  }
  if (includeSignals !== undefined && typeof includeSignals !== 'boolean') {
    throw fail(`${path}.includeSignals`, `expected a boolean, got ${describeValue(includeSignals)}`);
  }
  return {
    sendRouting: sendRouting ?? true,
    includeSignals: includeSignals ?? false,
    ...(messageId === undefined ? {} : { messageId }),
  };
}
