// Topic settings for real clusters: replication chosen from flags, environment and defaults, checked
// against the cluster's broker count; the topology's configs carry min.insync.replicas.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLUSTER_REPLICATION, SINGLE_BROKER_REPLICATION, kafkaTopicConfig, topicSpec } from '../../topology/index.ts';
import { ReplicationError, loadRuntimeConfig, replicationForCluster, replicationProblem } from '../../services/runtime/index.ts';
import { chooseReplication } from '../../services/cli/topics.ts';

describe('replication of created topics', () => {
  it('defaults to 3 copies with 2 in sync; a single broker is 1 and 1', () => {
    assert.deepEqual(CLUSTER_REPLICATION, { factor: 3, minInsyncReplicas: 2 });
    assert.deepEqual(SINGLE_BROKER_REPLICATION, { factor: 1, minInsyncReplicas: 1 });
    assert.deepEqual(chooseReplication({}, {}), { replication: CLUSTER_REPLICATION, explicit: false });
  });

  it('takes flags over MEGURI_REPLICATION_FACTOR / MEGURI_MIN_INSYNC_REPLICAS over the defaults', () => {
    const env = loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_REPLICATION_FACTOR: '5', MEGURI_MIN_INSYNC_REPLICAS: '3' });
    assert.deepEqual(chooseReplication({}, env).replication, { factor: 5, minInsyncReplicas: 3 });
    assert.deepEqual(chooseReplication({ replicationFactor: 4, minInsyncReplicas: 2 }, env).replication, { factor: 4, minInsyncReplicas: 2 });
    // A factor alone keeps min.insync.replicas workable: one below it, at most the default.
    assert.deepEqual(chooseReplication({ replicationFactor: 1 }, {}).replication, { factor: 1, minInsyncReplicas: 1 });
    assert.deepEqual(chooseReplication({ replicationFactor: 2 }, {}).replication, { factor: 2, minInsyncReplicas: 1 });
    assert.equal(chooseReplication({ replicationFactor: 2 }, {}).explicit, true);
  });

  it('refuses settings that cannot work, with the reason', () => {
    assert.throws(() => chooseReplication({ replicationFactor: 1, minInsyncReplicas: 2 }, {}), /min\.insync\.replicas 2 is above the replication factor 1/);
    assert.match(replicationProblem({ factor: 0, minInsyncReplicas: 1 }) ?? '', /≥ 1/);
    assert.throws(() => loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_REPLICATION_FACTOR: 'three' }), /replicationFactor \(MEGURI_REPLICATION_FACTOR\)/);
  });

  it('fails a factor above the broker count with the flags that would work', () => {
    assert.throws(
      () => replicationForCluster(CLUSTER_REPLICATION, 1),
      (err: unknown) =>
        err instanceof ReplicationError &&
        err.code === 'MEGURI_ERR_REPLICATION' &&
        /needs at least 3 brokers, but the cluster has 1/.test(err.message) &&
        /--replication-factor 1 --min-insync-replicas 1/.test(err.message),
    );
    assert.deepEqual(replicationForCluster(CLUSTER_REPLICATION, 3), { replication: CLUSTER_REPLICATION, capped: false });
  });

  it('lowers the defaults to the cluster only when asked (meguri crawl --kafka)', () => {
    assert.deepEqual(replicationForCluster(CLUSTER_REPLICATION, 1, { capToBrokers: true }), { replication: { factor: 1, minInsyncReplicas: 1 }, capped: true });
    assert.deepEqual(replicationForCluster(CLUSTER_REPLICATION, 2, { capToBrokers: true }), { replication: { factor: 2, minInsyncReplicas: 1 }, capped: true });
    assert.deepEqual(replicationForCluster(CLUSTER_REPLICATION, 5, { capToBrokers: true }).capped, false);
  });

  it('puts min.insync.replicas into the topic configs', () => {
    assert.equal(kafkaTopicConfig(topicSpec('frontier'), CLUSTER_REPLICATION)['min.insync.replicas'], '2');
    assert.equal(kafkaTopicConfig(topicSpec('frontier'))['min.insync.replicas'], undefined);
  });
});

describe('MEGURI_CREATE_TOPICS and MEGURI_FSYNC', () => {
  it('are off unless set, and read true/false/1/0', () => {
    const base = loadRuntimeConfig({ transport: 'embedded' }, {});
    assert.equal(base.createTopics, false);
    assert.equal(base.fsync, false);
    const on = loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_CREATE_TOPICS: 'true', MEGURI_FSYNC: '1' });
    assert.equal(on.createTopics, true);
    assert.equal(on.fsync, true);
    assert.equal(loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_FSYNC: 'false' }).fsync, false);
    assert.throws(() => loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_CREATE_TOPICS: 'maybe' }), /createTopics \(MEGURI_CREATE_TOPICS\)/);
  });
});

describe('MEGURI_COMMIT_INTERVAL_MS', () => {
  it('is 0 (after every flush) unless set, and takes whole milliseconds from 0 to 10 minutes', () => {
    assert.equal(loadRuntimeConfig({ transport: 'embedded' }, {}).commitIntervalMs, 0);
    assert.equal(loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_COMMIT_INTERVAL_MS: '0' }).commitIntervalMs, 0);
    assert.equal(loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_COMMIT_INTERVAL_MS: '2000' }).commitIntervalMs, 2000);
    assert.throws(() => loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_COMMIT_INTERVAL_MS: '-1' }), /commitIntervalMs \(MEGURI_COMMIT_INTERVAL_MS\)/);
    assert.throws(() => loadRuntimeConfig({ transport: 'embedded' }, { MEGURI_COMMIT_INTERVAL_MS: '1.5' }), /commitIntervalMs \(MEGURI_COMMIT_INTERVAL_MS\)/);
  });
});
