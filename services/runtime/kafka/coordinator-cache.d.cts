interface ClusterClass {
  readonly prototype: {
    findGroupCoordinator(args: { groupId: string; coordinatorType?: number }): Promise<unknown>;
    refreshMetadata(): Promise<void>;
    findBroker(args: { nodeId: number }): Promise<unknown>;
  };
}
export declare const COORDINATOR_TTL_MS: number;
export declare function installCoordinatorCache(Cluster: ClusterClass, now?: () => number): void;
export declare function hasCoordinatorCache(Cluster: ClusterClass): boolean;
export declare function coordinatorKey(coordinatorType: number, id: string): string;
export declare function markRefused(broker: unknown, key: string): void;
export declare function isRefused(broker: unknown, key: string): boolean;
export declare function clearRefused(broker: unknown, key: string): void;
