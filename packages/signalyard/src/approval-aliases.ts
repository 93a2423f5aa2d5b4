import type {
  ApprovalDecision,
  PendingApproval,
  SessionCause,
  SessionCheckpointV1,
  TranscriptEntry,
} from '@signalyard/core';

/**
 * Approval ids issued again by `fork` / `rewind` with `reissueApprovals`: the public id (what
 * `SessionView`, outcomes, events, the transcript and `approve` use) → the id the engine's own
 * state knows the approval by. Kept in the checkpoint as the top-level field `approvalAliases`
 * (internal); an id without an alias is the same on both sides. The engine never sees a public
 * id, and a public id never reaches the engine. @internal
 */
export type ApprovalAliases = ReadonlyMap<string, string>;

/** No aliases (the common case): shared. @internal */
export const NO_ALIASES: ApprovalAliases = new Map();

/**
 * The checkpoint's aliases; a malformed field (not an object of non-empty strings) counts as
 * none. @internal
 */
export function aliasesOf(data: SessionCheckpointV1): ApprovalAliases {
  const field = (data as { approvalAliases?: unknown }).approvalAliases;
  if (typeof field !== 'object' || field === null || Array.isArray(field)) return NO_ALIASES;
  const entries = Object.entries(field as Record<string, unknown>).filter(
    (e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '' && e[0] !== '',
  );
  return entries.length === 0 ? NO_ALIASES : new Map(entries);
}

/**
 * What an engine receives for a decision on an id that was issued again under a new one (the old
 * id, from a link sent before the rewind or fork): an id it never issued, so it treats the
 * decision as it treats any unknown id.
 */
function retiredId(engineId: string): string {
  return `${engineId}~retired`;
}

/** The engine's id for the public id `id` (an old, reissued id: one the engine never issued). */
function engineIdOf(id: string, aliases: ApprovalAliases): string {
  if (aliases === NO_ALIASES) return id;
  const engineId = aliases.get(id);
  if (engineId !== undefined) return engineId;
  // The old id of a reissued approval never decides it.
  for (const target of aliases.values()) if (target === id) return retiredId(id);
  return id;
}

/** `decisions` with the engine's ids (what `ctx.approvals` receives). @internal */
export function engineDecisions(
  decisions: readonly ApprovalDecision[],
  aliases: ApprovalAliases,
): readonly ApprovalDecision[] {
  if (aliases === NO_ALIASES || decisions.length === 0) return decisions;
  return decisions.map((d) => ({ ...d, id: engineIdOf(d.id, aliases) }));
}

/** Engine id → public id, for the aliases. @internal */
export function publicIds(aliases: ApprovalAliases): ReadonlyMap<string, string> {
  if (aliases === NO_ALIASES) return NO_ALIASES;
  return new Map([...aliases].map(([publicId, engineId]) => [engineId, publicId]));
}

/** `pending` as the engine knows it → with public ids (`toPublic`: from {@link publicIds}). @internal */
export function publicPending(
  pending: readonly PendingApproval[],
  toPublic: ReadonlyMap<string, string>,
): readonly PendingApproval[] {
  if (toPublic.size === 0 || pending.length === 0) return pending;
  return pending.map((p) => {
    const id = toPublic.get(p.id);
    return id === undefined ? p : { ...p, id };
  });
}

/** `pending` with public ids → as the engine knows it (`ctx.pendingApprovals`). @internal */
export function enginePending(
  pending: readonly PendingApproval[],
  aliases: ApprovalAliases,
): readonly PendingApproval[] {
  if (aliases === NO_ALIASES || pending.length === 0) return pending;
  return pending.map((p) => {
    const id = aliases.get(p.id);
    return id === undefined ? p : { ...p, id };
  });
}

/** An engine's `approval_requested` / `approval_resolved` event with public ids (other events as they are). @internal */
export function publicApprovalEvent(
  event: { type: string } & Record<string, unknown>,
  toPublic: ReadonlyMap<string, string>,
): { type: string } & Record<string, unknown> {
  if (toPublic.size === 0) return event;
  if (event.type === 'approval_resolved' && typeof event.id === 'string') {
    const id = toPublic.get(event.id);
    return id === undefined ? event : { ...event, id };
  }
  if (event.type === 'approval_requested' && Array.isArray(event.approvals)) {
    const approvals = (event.approvals as unknown[]).map((a) => {
      const old = (a as { id?: unknown } | null)?.id;
      const id = typeof old === 'string' ? toPublic.get(old) : undefined;
      return id === undefined ? a : { ...(a as object), id };
    });
    return { ...event, approvals };
  }
  return event;
}

/** A transcript with public approval ids. @internal */
export function publicTranscript(entries: TranscriptEntry[], aliases: ApprovalAliases): TranscriptEntry[] {
  if (aliases === NO_ALIASES) return entries;
  const toPublic = publicIds(aliases);
  return entries.map((e) => {
    const id = e.type === 'tool' && e.approvalId !== undefined ? toPublic.get(e.approvalId) : undefined;
    return id === undefined ? e : { ...e, approvalId: id };
  });
}

/**
 * The aliases still needed while the approvals `open` (pending and stale, public ids) are open:
 * as the checkpoint field, `undefined` when none. @internal
 */
export function keptAliases(
  aliases: ApprovalAliases,
  open: readonly { readonly id: string }[],
): Record<string, string> | undefined {
  if (aliases === NO_ALIASES) return undefined;
  let kept: Record<string, string> | undefined;
  for (const { id } of open) {
    const engineId = aliases.get(id);
    if (engineId !== undefined) (kept ??= {})[id] = engineId;
  }
  return kept;
}

/**
 * `data` as a fork's or rewind's new version `version`, with its pending approvals issued again
 * under new public ids (unique in the session: derived from the engine's id and `version`; the
 * format is not a contract). The engine's state is untouched: the aliases map each new id to the
 * engine's. Stale approvals not yet delivered keep their aliases. @internal
 */
export function reissued(data: SessionCheckpointV1, cause: SessionCause, version: number): SessionCheckpointV1 {
  const { approvalAliases: _old, ...rest } = data as SessionCheckpointV1 & { approvalAliases?: unknown };
  const aliases = aliasesOf(data);
  const stale = listOf(data.staleApprovals) as readonly { readonly id: string }[];
  const next: Record<string, string> = { ...keptAliases(aliases, stale) };
  const taken = new Set<string>([...stale.map((s) => s.id)]);
  const pending = listOf(data.pendingApprovals) as readonly PendingApproval[];
  for (const p of pending) taken.add(aliases.get(p.id) ?? p.id);
  const pendingApprovals = pending.map((p): PendingApproval => {
    const engineId = aliases.get(p.id) ?? p.id;
    let id = `${engineId}~r${version}`;
    for (let n = 2; taken.has(id); n++) id = `${engineId}~r${version}.${n}`;
    taken.add(id);
    next[id] = engineId;
    return { ...p, id };
  });
  return {
    ...rest,
    ...(pendingApprovals.length > 0 && { pendingApprovals }),
    ...(Object.keys(next).length > 0 && { approvalAliases: next }),
    cause,
  };
}

/** A checkpoint's approval list (none when the field is absent or not a list). */
function listOf(field: unknown): readonly unknown[] {
  return Array.isArray(field) ? (field as readonly unknown[]) : [];
}
