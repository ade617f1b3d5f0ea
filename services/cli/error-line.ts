/**
 * The line `meguri` prints for an error that ended a command: its message, and for a situation a
 * user can fix, what to do about it.
 */

/** The error and the causes it wraps, outermost first (kafkajs wraps a connection failure twice). */
function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && chain.length < 10; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

/** kafkajs gave up connecting to the brokers it was given (none answers, or none at that address). */
export function isBrokerUnreachable(err: unknown): boolean {
  return causes(err).some((e) => e instanceof Error && e.name === 'KafkaJSConnectionError');
}

export function errorLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (isBrokerUnreachable(err)) {
    return `meguri: no Kafka broker answers (${message}): check --kafka; \`bash deploy/local/kafka.sh start\` runs a local one and prints its address (KAFKA_BROKERS=…)`;
  }
  return `meguri: ${message}`;
}
