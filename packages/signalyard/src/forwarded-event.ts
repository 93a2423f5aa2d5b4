/**
 * An engine's event as the plain record `ctx.emit` forwards: a shallow copy, with a model call's
 * `request` (crew's `agent_response`, a pipeline's `stage_model_response`: set non-enumerably, so
 * serialized events leave it out) carried over non-enumerably for plugins that record calls.
 * @internal
 */
export function forwardedEvent(event: { readonly type: string }): { type: string } & Record<string, unknown> {
  const copy: { type: string } & Record<string, unknown> = { ...event };
  const request = (event as { readonly request?: unknown }).request;
  if (request !== undefined && !('request' in copy)) Object.defineProperty(copy, 'request', { value: request });
  return copy;
}
