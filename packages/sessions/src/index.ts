/**
 * `@signalyard/sessions`: which agent and which conversation an inbound message belongs to —
 * channel-aware session keys (six variants, injective string format), DM scopes, route bindings
 * resolved by an indexed `RouteResolver` (and explained by `explain`), cross-channel identity
 * links, the routing TOML, and a lint for bindings that can never win.
 *
 * @packageDocumentation
 */
export { SessionKey, agentIdOf } from './session-key.js';
export type {
  DirectMessageOptions,
  DmScope,
  GroupOptions,
  PeerKind,
  SessionKeyFactories,
  TaskType,
} from './session-key.js';
export type { SessionKeyShape } from './session-key-types.js';
export { MAX_SESSION_KEY_LENGTH, MAX_SUBAGENT_DEPTH } from './session-key-limits.js';
export { formatSessionKey } from './session-key-format.js';
export { parseSessionKey } from './session-key-parse.js';
export { MAX_AGENT_ID_LENGTH, normalizeAgentId } from './normalize.js';
export { SessionKeyError } from './errors/session-key-error.js';
export type { SessionKeyErrorCode } from './errors/session-key-error.js';
export { routingConfigSchema } from './routing-config.js';
export type {
  DeepPartial,
  InboundPeerKind,
  MatchRule,
  PeerRef,
  RouteBinding,
  RoutingConfig,
  RoutingConfigInput,
  SessionConfig,
} from './routing-config.js';
export { RouteResolver, resolveRoute } from './route-resolver.js';
export type { ConsideredBinding, InboundRoute, MatchedBy, ResolvedRoute, RouteExplanation } from './route-resolver.js';
export { resolveLinkedPeerId } from './identity-links.js';
export type { LinkLookupOptions } from './identity-links.js';
export { loadRoutingConfig, parseRoutingConfig } from './routing-toml.js';
export { lintRoutingConfig, lintRoutingToml } from './routing-lint.js';
export type { RoutingLintWarning } from './routing-lint.js';
export { ConfigError } from '@signalyard/core';
export type { ConfigProblem } from '@signalyard/core';
