/**
 * What the runtime needs to know about topics, passed in by the caller (the CLI wires the crawler's
 * schemas and topology): the runtime itself knows no crawler topic.
 */
import type { z } from 'zod';

export interface TopicConfigDefinition {
  readonly name: string;
  readonly partitions: number;
  readonly config: Record<string, string>;
}

/**
 * How a topic's values become bytes and back, for topics whose records are not plain JSON (a page
 * carries its body as raw bytes). `decode` throws on a value it cannot read: the record is then
 * dead-lettered with MEGURI_ERR_DECODE. Schema validation still runs on what it returns.
 */
export interface ValueCodec {
  encode(value: unknown): Buffer;
  decode(raw: Buffer): unknown;
}

export interface TopicCatalog {
  /** Schema of each logical input topic; a topic without one passes JSON through unchecked. */
  schema(logical: string): z.ZodType | undefined;
  /** Value codec of a logical topic; topics without one are UTF-8 JSON. */
  codec?(logical: string): ValueCodec | undefined;
  /** Partition count and Kafka configs of a logical topic (physical name chosen by the runtime). */
  topic(logical: string): { readonly partitions: number; readonly config: Record<string, string> };
  /** Name and configs of the changelog of a store of a group. */
  changelog(group: string, store: string, partitions: number): TopicConfigDefinition;
  /** Version stamped on dead-letter records. */
  readonly deadletterVersion: number;
  /**
   * Makes an output fit `maxBytes` when its topic allows a smaller form (a page whose body can be
   * cut): returns the smaller value, or undefined when the record cannot shrink (it is then
   * dead-lettered with the reason).
   */
  shrink?(logical: string, value: unknown, maxBytes: number, reason: string): unknown;
  /**
   * Makes an output fit `maxBytes` (its value's encoded size) as several records, or as one
   * smaller one, that together say what it said (a bundle of links split in halves): returns the
   * values, sent in order under the record's key, or undefined when it cannot (then `shrink` is
   * tried, else the record is dead-lettered).
   */
  split?(logical: string, value: unknown, maxBytes: number): readonly unknown[] | undefined;
}

/** Kafka's default `max.message.bytes` (1 MiB plus the record-batch overhead). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;
