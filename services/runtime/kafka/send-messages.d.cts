interface SendDeps {
  readonly logger: { debug(message: string, extra?: object): void; error(message: string, extra?: object): void };
  readonly cluster: object;
  readonly partitioner: (args: { topic: string; partitionMetadata: readonly unknown[]; message: unknown }) => number;
  readonly eosManager: object;
  readonly retrier: <T>(fn: (bail: (e: Error) => void, retryCount: number, retryTime: number) => Promise<T>) => Promise<T>;
}
interface Send {
  readonly acks?: number;
  readonly timeout?: number;
  readonly compression?: number;
  readonly topicMessages: readonly { readonly topic: string; readonly messages: readonly object[] }[];
}
declare function createSendMessages(deps: SendDeps): (send: Send) => Promise<Record<string, unknown>[]>;
export = createSendMessages;
