import { errorText } from '@signalyard/core/internal';

// Reading what was thrown, totally: a thrown value may be anything, including a revoked Proxy, a
// Proxy whose every trap throws, or an object whose `message` / `code` getters throw. Nothing
// here ever throws (core's `describeValue` never does either).

/** A message for any thrown or reported value: the string itself, or `errorText` of it. Never throws. */
export function messageOf(value: unknown): string {
  return typeof value === 'string' ? value : errorText(value);
}
