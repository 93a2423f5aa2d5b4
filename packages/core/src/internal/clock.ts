let lastMs = Number.NaN;
let lastIso = '';

/**
 * `ms` (milliseconds since the epoch) as an ISO 8601 string. Hot paths (a pipeline stage, a
 * checkpoint save) mostly ask within the same millisecond, so the last conversion is cached.
 */
export function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** The current time as an ISO 8601 string (the hot path pays for `Date.now()` only). */
export function isoNow(): string {
  return isoAt(Date.now());
}
