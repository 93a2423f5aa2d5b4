import { outcomeToJson, type OutcomeJson } from '../outcome-json.js';
import type { Outcome } from '../runner-event.js';
import { isRecord } from './values.js';

/** The JSON made last for each outcome, with the `maxOutcomeBytes` it was made under. */
const made = new WeakMap<object, { readonly max: number; readonly json: OutcomeJson }>();

/**
 * `outcomeToJson(outcome, { maxOutcomeBytes })`, made once per outcome object: a worker settling
 * an inbox entry needs its outcome's JSON several times (recorded by the settling save, kept
 * until stored, stored, and as the stream's `outcome` event), and outcomes are not changed once
 * made. The same object back for the same outcome and limit.
 * @throws what {@link outcomeToJson} throws.
 * @internal
 */
export function outcomeJsonOnce(outcome: Outcome, maxOutcomeBytes: number): OutcomeJson {
  // Not an object (a caller outside the types): outcomeToJson says why.
  if (!isRecord(outcome)) return outcomeToJson(outcome, { maxOutcomeBytes });
  const known = made.get(outcome);
  if (known?.max === maxOutcomeBytes) return known.json;
  const json = outcomeToJson(outcome, { maxOutcomeBytes });
  made.set(outcome, { max: maxOutcomeBytes, json });
  return json;
}
