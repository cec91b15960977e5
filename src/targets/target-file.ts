/**
 * The targets file (PORTER_TARGETS_FILE): a JSON object of target name → target. A secret is
 * never written in it: the file names where the secret is read from, an environment variable
 * or a file, and porter reads it when the process starts.
 */
import { z } from 'zod';

/** Names of targets: short, lower-case, safe in Redis keys, URLs and file names. */
export const TARGET_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
export const TARGET_NAME_TEXT =
  'lower-case letters, digits, "-" and "_", at most 40, first a letter or digit';

/** Where a secret is read from: an environment variable or a file (its first line). */
export const secretSourceSchema = z.union(
  [
    z.strictObject({
      env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'),
    }),
    z.strictObject({ file: z.string().min(1) }),
  ],
  {
    error:
      'a secret is never written in the targets file: give {"env": "VARIABLE"} or {"file": "/path/to/secret"}',
  },
);
export type SecretSource = z.infer<typeof secretSourceSchema>;

const positiveInt = z.number().int().positive();

export const targetEntrySchema = z.strictObject({
  /** Base URL of the admin server (a path prefix before /wf is kept). */
  url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }),
  /** One line about the instance, shown by `porter targets` and the console. */
  description: z.string().max(200).optional(),
  /** Sent as the `apikey` header. */
  apiKey: secretSourceSchema.optional(),
  /** User porter signs in as (with `password`); a sync never touches this account. */
  user: z.string().min(1).max(200).optional(),
  password: secretSourceSchema.optional(),
  /** How user and password travel: HTTP Basic (default) or user/pass parameters. */
  authMode: z.enum(['basic', 'params']).optional(),
  /** Extra headers on every request; a value is a plain string or a secret's source. */
  headers: z
    .record(
      z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'a header name'),
      z.union([z.string(), secretSourceSchema]),
    )
    .optional(),
  timeoutMs: positiveInt.optional(),
  connectTimeoutMs: positiveInt.optional(),
  /** Requests per second to this server across every worker; 0 = no cap. */
  maxRps: z.number().int().min(0).optional(),
  /** Calls to this server in flight at once from one worker process. */
  maxInFlight: positiveInt.max(256).optional(),
  /** Every write is refused before anything is sent; reads, exports and dry runs still work. */
  readOnly: z.boolean().optional(),
  /**
   * Four eyes on this target's plans: true, a dry run's plan is applied by another principal
   * than the one who started it; false, a held sync may be approved by whoever started it.
   * Unset: held syncs need another principal, dry runs do not.
   */
  requireApproval: z.boolean().optional(),
  /** SCIM on this target (docs/scim.md#the-deletion-hold). */
  scim: z
    .strictObject({
      /** Deletes and deactivations applied per hour; more are held for approval. */
      maxDeletesPerHour: z.number().int().min(0).optional(),
      /** Usernames SCIM never deletes or deactivates (compared without regard to case). */
      protect: z.array(z.string().min(1).max(200)).max(10_000).optional(),
    })
    .optional(),
});
export type TargetEntry = z.infer<typeof targetEntrySchema>;

export const targetsFileSchema = z.record(
  z.string().regex(TARGET_NAME, TARGET_NAME_TEXT),
  targetEntrySchema,
);
