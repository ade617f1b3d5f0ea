declare function groupMessagesPerPartition<M>(send: {
  readonly topic: string;
  readonly partitionMetadata: readonly unknown[];
  readonly messages: readonly M[];
  readonly partitioner: (args: { topic: string; partitionMetadata: readonly unknown[]; message: M }) => number;
}): Record<number, M[]>;
export = groupMessagesPerPartition;
