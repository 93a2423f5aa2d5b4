import type { TranscriptEntry } from '@signalyard/core';

/**
 * What the approvals policy decided for one tool call of the main loop (a crew engine state keeps
 * the most recent ones, so a reloaded transcript shows them): the call's id, the decision, and
 * the deciding rule's name.
 * @internal
 */
export interface PolicyRecord {
  readonly call: string;
  readonly decision: 'allow' | 'deny' | 'ask';
  readonly rule?: string;
}

/** How many policy decisions a crew session remembers. */
const RECORDS_KEPT = 256;

const DECISIONS: ReadonlySet<unknown> = new Set(['allow', 'deny', 'ask']);

/**
 * The record of a crew `approval_decided` event of the main loop (not a parallel member's, whose
 * calls the transcript does not show); `undefined` for any other event.
 * @internal
 */
export function policyRecordOf(event: { readonly type: string } & Record<string, unknown>): PolicyRecord | undefined {
  if (event.type !== 'approval_decided' || event.group !== undefined) return undefined;
  const { toolCallId: call, decision, ruleName: rule } = event;
  if (typeof call !== 'string' || !DECISIONS.has(decision)) return undefined;
  return typeof rule === 'string'
    ? { call, decision: decision as PolicyRecord['decision'], rule }
    : { call, decision: decision as PolicyRecord['decision'] };
}

/** `kept` followed by `added`, the newest {@link RECORDS_KEPT}. @internal */
export function keptRecords(
  kept: readonly PolicyRecord[] | undefined,
  added: readonly PolicyRecord[],
): readonly PolicyRecord[] | undefined {
  if (added.length === 0) return kept;
  const all = [...(kept ?? []), ...added];
  return all.length > RECORDS_KEPT ? all.slice(all.length - RECORDS_KEPT) : all;
}

function isRecords(value: unknown): value is readonly PolicyRecord[] {
  return (
    Array.isArray(value) &&
    value.every((r: unknown) => {
      if (typeof r !== 'object' || r === null) return false;
      const { call, decision, rule } = r as Record<string, unknown>;
      return typeof call === 'string' && DECISIONS.has(decision) && (rule === undefined || typeof rule === 'string');
    })
  );
}

/**
 * `entries` with each tool entry's `approval` (what the policy decided, and the rule) from
 * `records`: the newest record of a call id goes to the latest tool entry of that id (a model's
 * call ids may repeat across replies). Malformed records change nothing.
 * @internal
 */
export function withPolicyRecords(entries: TranscriptEntry[], records: unknown): TranscriptEntry[] {
  if (!isRecords(records) || records.length === 0) return entries;
  const byCall = new Map<string, PolicyRecord[]>();
  for (const r of records) {
    const list = byCall.get(r.call);
    if (list === undefined) byCall.set(r.call, [r]);
    else list.push(r);
  }
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as TranscriptEntry;
    if (entry.type !== 'tool') continue;
    const record = byCall.get(entry.call.id)?.pop();
    if (record === undefined) continue;
    const approval =
      record.rule === undefined ? { decision: record.decision } : { decision: record.decision, rule: record.rule };
    entries[i] = { ...entry, approval };
  }
  return entries;
}
