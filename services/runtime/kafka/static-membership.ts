/**
 * Static group membership (KIP-345, `group.instance.id`) for kafkajs 2.2.4, which builds the newer
 * JoinGroup, SyncGroup, Heartbeat and LeaveGroup requests that carry the field but never fills it.
 *
 * A member that runs its consumer inside `withInstanceId(id, ...)` has every group request its
 * consumer makes carry `id` (AsyncLocalStorage follows the consumer's loops, timers and retries),
 * and it never sends LeaveGroup: a pod that restarts within the session timeout joins again under
 * the same id and the coordinator hands it the same partitions, with no rebalance of anyone. A
 * member that stops for good is dropped when its session times out. Two live processes with one id
 * cannot both be members: the coordinator fences the older one (FENCED_INSTANCE_ID, fatal here).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
// kafkajs with the read_committed fix loads first, so the modules below are the ones it uses.
import './kafkajs.ts';

const instance = new AsyncLocalStorage<string>();
const INSTALLED = Symbol.for('meguri:staticMembership');

type Builder = (args: Record<string, unknown>) => unknown;
interface RequestDefinition {
  protocol: (options: { version: number }) => Builder;
  [INSTALLED]?: true;
}

/** Runs `fn` (and everything it starts) as the member `id`; undefined: a dynamic member. */
export function withInstanceId<T>(id: string | undefined, fn: () => T): T {
  return id === undefined ? fn() : instance.run(id, fn);
}

/** The static instance id of the code running now, if any. */
export function currentInstanceId(): string | undefined {
  return instance.getStore();
}

function install(): void {
  const require = createRequire(import.meta.url);
  const { requests } = require('kafkajs/src/protocol/requests/index.js') as { requests: Record<string, RequestDefinition> };
  for (const name of ['JoinGroup', 'SyncGroup', 'Heartbeat', 'LeaveGroup']) {
    const definition = requests[name];
    if (!definition || typeof definition.protocol !== 'function') throw new Error(`kafkajs has no ${name} request definition: static membership cannot be installed (a different kafkajs version?)`);
    if (definition[INSTALLED]) continue;
    const protocol = definition.protocol;
    // Versions without the field ignore it; the broker's newest common version (JoinGroup v5,
    // SyncGroup/Heartbeat/LeaveGroup v3 on Kafka ≥ 2.3) writes it.
    definition.protocol = (options) => {
      const build = protocol(options);
      return (args) => {
        const id = instance.getStore();
        return build(id !== undefined && args.groupInstanceId == null ? { ...args, groupInstanceId: id } : args);
      };
    };
    definition[INSTALLED] = true;
  }
  const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: { leave(): Promise<void>; memberId: string | null } & { [INSTALLED]?: true } };
  const proto = ConsumerGroup.prototype;
  if (typeof proto.leave !== 'function') throw new Error('kafkajs has no ConsumerGroup.leave: static membership cannot be installed');
  if (proto[INSTALLED]) return;
  const leave = proto.leave;
  proto.leave = async function (this: { memberId: string | null }) {
    // A static member keeps its place through a restart: the session timeout ends it, not a leave.
    if (instance.getStore() !== undefined) {
      this.memberId = null;
      return;
    }
    return leave.call(this);
  };
  proto[INSTALLED] = true;
}

install();
