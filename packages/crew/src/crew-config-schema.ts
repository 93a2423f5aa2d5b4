import * as z from 'zod';
import type { CrewConfig } from './crew-config.js';
import { CAMEL_KEYS, SNAKE_KEYS, type CrewKeys, type Obj } from './crew-config-keys.js';
import { crossReferences } from './crew-config-references.js';
import { resolveAccepted } from './crew-config-resolution.js';
import { allowedKeys, structuralSchema } from './crew-config-shape.js';

// The crew schema: the shape (crew-config-shape.ts), then the cross references
// (crew-config-references.ts), then the camelCase result (crew-config-resolution.ts), for each
// of the two spellings (crew-config-keys.ts).

/** Marks an issue whose line is that of the offending key (not its value). @internal */
export const AT_KEY = 'key';

/** Builds the full schema (shape, unknown keys, cross references, then the camelCase result) for one spelling. */
function buildCrewSchema(k: CrewKeys): z.ZodType<CrewConfig> {
  const structural = structuralSchema(k);
  return z
    .unknown()
    .superRefine((data, ctx) => {
      const result = structural.safeParse(data);
      if (!result.success) {
        for (const issue of result.error.issues) {
          if (issue.code === 'unrecognized_keys') {
            const allowed = allowedKeys(issue.path, k);
            for (const key of issue.keys) {
              ctx.addIssue({
                code: 'custom',
                path: [...issue.path, key],
                message: `unknown key ${JSON.stringify(key)} (expected ${allowed.join(', ')})`,
                params: { at: AT_KEY },
              });
            }
          } else {
            ctx.addIssue({ ...issue });
          }
        }
      }
      for (const p of crossReferences(data, k)) {
        ctx.addIssue({
          code: 'custom',
          path: [...p.path],
          message: p.message,
          ...(p.atKey === true ? { params: { at: AT_KEY } } : {}),
        });
      }
    })
    .transform((data) => resolveAccepted(data as Obj, k));
}

/**
 * The zod schema of a crew.yaml document (snake_case keys, as parsed from YAML or JSON); its
 * output is the camelCase {@link CrewConfig} with every default filled in.
 *
 * It checks, all at once: unknown keys at every level; no agents; duplicate agent ids; an
 * unknown `entry_point`; invalid signal formats (`isValidSignal`) and signals longer than 200
 * UTF-16 code units (so a stream's hold-back window covers a whole marker); duplicate signals within one
 * agent (signals that normalise alike match the same replies, so they count as duplicates);
 * non-empty targets that name neither an agent nor a parallel group; `routing.signals` and
 * `agent_behaviors` keys, `handoff_targets`, group members and `next_agent` naming unknown
 * agents; empty groups, a member listed twice, a group named like an agent; non-positive
 * limits and timeouts; and every type. Issues at an unknown or unknown-agent key carry
 * `params: { at: 'key' }`.
 *
 * Most code wants {@link parseCrewConfig} (which adds line numbers and throws `ConfigError`);
 * use the schema to validate data from elsewhere, or to compose it into a larger schema.
 *
 * @example
 * ```ts
 * const result = crewConfigSchema.safeParse(JSON.parse(text));
 * if (result.success) result.data.settings.maxHandoffs;   // 5 unless set
 * ```
 */
export const crewConfigSchema: z.ZodType<CrewConfig> = buildCrewSchema(SNAKE_KEYS);

/** The same rules over the camelCase keys of a crew written in code. @internal */
export const crewConfigInputSchema: z.ZodType<CrewConfig> = buildCrewSchema(CAMEL_KEYS);
