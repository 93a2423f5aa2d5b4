let lastMs = Number.NaN;
let lastIso = '';

/**
 * The current time as an ISO 8601 string. Stages in a tight loop mostly finish within the same
 * millisecond, so the last conversion is cached: the hot path pays for `Date.now()` only.
 * @internal
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
