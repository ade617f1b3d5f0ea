interface CoordinatorClasses {
  readonly Broker: { readonly prototype: object };
  readonly OffsetManager: { readonly prototype: { getCoordinator(): Promise<unknown> } };
  readonly ConsumerGroup: { readonly prototype: { heartbeat(args: { interval: number }): Promise<unknown>; leave(): Promise<unknown> } };
}
export declare function installCoordinatorMoves(classes: Partial<CoordinatorClasses>): void;
export declare function hasCoordinatorMoves(classes: CoordinatorClasses): boolean;
export declare function isCoordinatorFailure(e: unknown): boolean;
export declare function followCoordinatorsInSendOffsets<F extends (options: { cluster: { retry?: object } }) => { sendOffsets(args: object): Promise<unknown> }>(
  createEosManager: F,
  createRetry: (options?: object) => <T>(fn: (bail: (e: Error) => void, retryCount: number, retryTime: number) => Promise<T>) => Promise<T>,
): F;
/** Whether a function is one of this module's patches. */
export declare function followsCoordinators(fn: unknown): boolean;
