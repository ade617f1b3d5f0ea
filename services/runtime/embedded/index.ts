/** The embedded log transport: a durable, partitioned, replayable log in RocksDB. */
export { EmbeddedTransport } from './embedded-transport.ts';
export type { EmbeddedTransportOptions } from './embedded-transport.ts';
export { EmbeddedGroupMember } from './group.ts';
export type { MemberStats } from './group.ts';
export { FencedCommitError, LogClosedError, UnknownTopicError } from './log.ts';
export type { MaintenanceReport } from './log.ts';
