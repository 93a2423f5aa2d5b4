import { Action, ConfigError, SignalKind, type Plugin, type Signal, type SignalRoute } from '@signalyard/core';
import { cardNumber, email, phone, redact, secretToken, type Detector, type Finding } from './detectors.js';

/** Options of {@link piiGatePlugin}. */
export interface PiiGateOptions {
  /** Messages containing any of these are refused with `reject('pii_detected')`. Default: card numbers and secret tokens. */
  readonly reject?: readonly Detector[];
  /** Messages containing any of these (and none to reject) go to the `redact` custom action. Default: e-mail addresses and phone numbers. */
  readonly redact?: readonly Detector[];
}

/** The output of the `redact` custom action: the message with personal data replaced. */
export interface RedactedMessage {
  readonly text: string;
  readonly findings: readonly Finding[];
}

const textOf = (signal: Signal): string | undefined => {
  const p = signal.payload;
  if (typeof p === 'string') return p;
  if (typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string')
    return (p as { text: string }).text;
  return undefined;
};

const findAll = (detectors: readonly Detector[], text: string): Finding[] => detectors.flatMap((d) => d.find(text));

/**
 * A PII gate for Signalyard runners. It contributes two plugin-tier routes for user messages
 * (defaults an agent may override with its own user-message routes):
 *
 * - `pii-reject` (priority 10): a message with a card number or a secret token is refused with
 *   `Action.reject('pii_detected')`: nothing runs.
 * - `pii-redact`: a message with an e-mail address or a phone number is routed to
 *   `Action.custom('redact')`, whose handler (registered in `setup`) returns a
 *   {@link RedactedMessage} as the outcome's `output`, for the application to show or resubmit.
 *
 * Note that a Runner records every user message that arrives in the session history, whatever
 * the outcome: a gate decides what the agent acts on, not what was received.
 *
 * @example
 * ```ts
 * createRunner({ agents, plugins: [piiGatePlugin()] });
 * ```
 */
export function piiGatePlugin(options: PiiGateOptions = {}): Plugin {
  const rejectWith = options.reject ?? [cardNumber, secretToken];
  const redactWith = options.redact ?? [email, phone];
  for (const [path, list] of [
    ['reject', rejectWith],
    ['redact', redactWith],
  ] as const) {
    const valid = (d: unknown): boolean =>
      typeof d === 'object' &&
      d !== null &&
      typeof (d as Detector).find === 'function' &&
      typeof (d as Detector).name === 'string';
    if (!Array.isArray(list) || !(list as unknown[]).every(valid)) {
      throw new ConfigError({ problems: [{ path, message: 'expected a list of detectors { name, find(text) }' }] });
    }
  }
  const routes: readonly SignalRoute[] = [
    {
      kind: SignalKind.UserMessage,
      name: 'pii-reject',
      priority: 10,
      predicate: (s) => {
        const text = textOf(s);
        return text !== undefined && findAll(rejectWith, text).length > 0;
      },
      action: Action.reject('pii_detected'),
    },
    {
      kind: SignalKind.UserMessage,
      name: 'pii-redact',
      predicate: (s) => {
        const text = textOf(s);
        return text !== undefined && findAll(redactWith, text).length > 0;
      },
      action: Action.custom('redact'),
    },
  ];
  return {
    name: 'pii-gate',
    signalRoutes: () => routes,
    setup(ctx) {
      ctx.handleCustomAction('redact', ({ signal }): RedactedMessage => {
        const text = textOf(signal) ?? '';
        const findings = findAll(redactWith, text);
        return { text: redact(text, findings), findings };
      });
    },
  };
}
