// How the timeline describes a crew's handoff, in one line (no DOM: tested in Node).

/**
 * A `handoff` engine event in words: who to whom and how — `triage → billing (signal [ROUTE_BILLING])`
 * for a marker, `triage → billing (transfer_to_billing)` for a transfer tool call, `(parallel)` /
 * `(fallback)` otherwise. The model's `reason` for a transfer, when it gave one, is separate.
 */
export function handoffText(ev) {
  const how =
    typeof ev.tool === 'string' ? ev.tool : `via ${ev.via}${typeof ev.signal === 'string' ? ` ${ev.signal}` : ''}`;
  return `${ev.from} → ${ev.to} (${how})`;
}
