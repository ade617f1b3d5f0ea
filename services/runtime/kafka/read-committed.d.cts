export interface FetchedMessage {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly isControlRecord?: boolean;
  readonly batchContext?: { readonly producerId?: string; readonly inTransaction?: boolean };
}
export interface AbortedTransaction {
  readonly producerId: string;
  readonly firstOffset: string;
}
export declare function filterAbortedMessages<M extends FetchedMessage>(fetched: {
  readonly messages: readonly M[];
  readonly abortedTransactions?: readonly AbortedTransaction[] | null;
}): M[];
export declare function isAbortMarker(message: { readonly key: Buffer | null }): boolean;
