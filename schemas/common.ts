import { z } from 'zod';

/** Every record carries its schema version so consumers can branch on it when the shape evolves. */
export const SCHEMA_VERSION = 1 as const;
export const version = z.literal(SCHEMA_VERSION).describe('Schema version of this record.');

export const httpUrl = z
  .string()
  .min(1)
  .max(8192)
  .refine((s) => /^https?:\/\//i.test(s), { message: 'must be an absolute http(s) URL' })
  .describe('Absolute http(s) URL, normalised.');

export const epochMs = z.number().int().nonnegative().describe('Milliseconds since the Unix epoch.');

export const validators = z
  .object({
    etag: z.string().max(1024).optional(),
    lastModified: z.string().max(256).optional().describe('Last-Modified header as received.'),
  })
  .describe('HTTP validators for a conditional GET.');

/** Where a record lives in a topic; lets subscribers fetch content from `pages` without a copy. */
export const recordPointer = z.object({
  topic: z.string(),
  partition: z.number().int().nonnegative(),
  offset: z.string().regex(/^\d+$/).describe('Offset as a decimal string (Kafka offsets are 64-bit).'),
});

/** Stable error codes; the fetcher and parser never invent free-text kinds. */
export const errorCode = z
  .string()
  .regex(/^MEGURI_ERR_[A-Z0-9_]+$/)
  .describe('Stable error code, e.g. MEGURI_ERR_TIMEOUT.');
