// Helpers for running one crew test in both handoff modes (not a test file itself): the same
// scripted replies, written with markers, become transfer tool calls in `tool` mode.
import type { ChatRequest, ChatResponse } from '@signalyard/core';
import {
  scriptedModel,
  type ScriptStep,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptResponder,
} from '@signalyard/core/testing';
import {
  resolveCrewConfig,
  signalMatches,
  type CrewConfig,
  type CrewConfigInput,
  type HandoffMode,
} from '@signalyard/crew';
import { transferToolName } from '../src/transfer-tools.js';

/** The two ways a model hands off that every handoff behaviour is tested in. */
export const MODES = ['marker', 'tool'] as const satisfies readonly HandoffMode[];
export type Mode = (typeof MODES)[number];

/** `crew` with `settings.handoffMode` set to `mode` (its other settings kept). */
export function inMode(mode: HandoffMode, crew: CrewConfigInput): CrewConfigInput {
  return { ...crew, settings: { ...crew.settings, handoffMode: mode } };
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The reply `text` (written with markers) as a model hands off in `mode`: in `marker` mode the
 * text itself; in `tool` mode the text without any of the crew's markers, and — when one of
 * `agentId`'s signals decides (termination first, then routing, in config order, as markers do)
 * — a call to that signal's transfer tool (with `reason` when given).
 */
function replyIn(
  mode: HandoffMode,
  crew: CrewConfig,
  agentId: string,
  text: string,
  callId: string,
  reason?: string,
): string | ChatResponse {
  if (mode === 'marker') return text;
  const signals = crew.routing.signals[agentId] ?? [];
  const deciding =
    signals.find((s) => s.target === '' && signalMatches(s.signal, text)) ??
    signals.find((s) => s.target !== '' && signalMatches(s.signal, text));
  let content = text;
  for (const list of Object.values(crew.routing.signals))
    for (const s of list) content = content.replace(new RegExp(`\\s*${escape(s.signal)}`, 'gi'), '');
  content = content.trim();
  if (deciding === undefined) return content;
  const args = reason === undefined ? {} : { reason };
  return { content, toolCalls: [{ id: callId, name: transferToolName(deciding), arguments: args }] };
}

type Script = readonly ScriptStep[] | Readonly<Record<string, readonly ScriptStep[]>> | ScriptResponder;

/**
 * A scripted model for `crew` in `mode`: `script` as `scriptedModel` takes it, its replies written
 * with markers; in `tool` mode each reply (a string, or a responder's string) is converted by
 * {@link replyIn}, with call ids `t1`, `t2`, … in the order replies are made.
 */
export function scriptIn(
  mode: HandoffMode,
  crew: CrewConfigInput,
  script: Script,
  opts?: ScriptedModelOptions,
): ScriptedModel {
  if (mode === 'marker') return scriptedModel(script, opts);
  const resolved = resolveCrewConfig(inMode(mode, crew));
  let n = 0;
  const convert =
    (step: ScriptStep): ScriptResponder =>
    async (request: ChatRequest) => {
      const reply = typeof step === 'function' ? await step(request) : step;
      if (typeof reply !== 'string') return reply;
      n++;
      return replyIn(mode, resolved, request.agentId ?? '', reply, `t${n}`);
    };
  if (typeof script === 'function') return scriptedModel(convert(script), opts);
  if (Array.isArray(script)) return scriptedModel((script as readonly ScriptStep[]).map(convert), opts);
  const byAgent = Object.fromEntries(
    Object.entries(script as Readonly<Record<string, readonly ScriptStep[]>>).map(([id, steps]) => [
      id,
      steps.map(convert),
    ]),
  );
  return scriptedModel(byAgent, opts);
}
