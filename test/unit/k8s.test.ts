// The Kubernetes base stays in step with the topology: the committed YAML is what the generator
// produces, kustomize renders it, and every topic has its KafkaTopic.
// Run: node --import tsx --test test/unit/k8s.test.ts
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { GENERATED_HEADER, KAFKA_CLUSTER, KAFKA_NAMESPACE, kafkaTopics, renderK8s, topicResourceName, toYaml } from '../../topology/generate-k8s.ts';
import { CLUSTER_REPLICATION, services, topics } from '../../topology/index.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const baseDir = join(root, 'deploy/k8s/base');

/** One YAML document, read loosely: kind, name and a few top-level spec fields by regex. */
interface Doc {
  readonly kind: string;
  readonly name: string;
  readonly text: string;
}

function unquote(s: string): string {
  return s.startsWith('"') ? (JSON.parse(s) as string) : s;
}

function field(text: string, re: RegExp): string | undefined {
  const m = re.exec(text);
  return m?.[1] === undefined ? undefined : unquote(m[1].trim());
}

function parseStream(yaml: string): Doc[] {
  return `\n${yaml}\n`
    .split(/\n---\s*\n/)
    .map((text) => text.replace(/^(\s*#.*\n)+/, ''))
    .filter((text) => text.trim() !== '')
    .map((text) => ({
      kind: field(text, /^kind: (.+)$/m) ?? '',
      name: field(text, /^metadata:\n(?: {2}.*\n|\n)*? {2}name: (.+)$/m) ?? '',
      text,
    }));
}

function find(docs: readonly Doc[], kind: string, name: string): Doc {
  const doc = docs.find((d) => d.kind === kind && d.name === name);
  assert.ok(doc, `no ${kind} ${name}; have ${docs.map((d) => `${d.kind}/${d.name}`).join(', ')}`);
  return doc;
}

/** Checks the KafkaTopics in `docs` against the topology: one per topic, partitions and policy. */
function checkTopics(docs: readonly Doc[]): void {
  const kafkaTopicDocs = docs.filter((d) => d.kind === 'KafkaTopic');
  const expected = kafkaTopics();
  assert.equal(kafkaTopicDocs.length, expected.length, 'one KafkaTopic per topic and changelog');
  for (const { physical, spec } of expected) {
    const doc = find(kafkaTopicDocs, 'KafkaTopic', topicResourceName(physical));
    assert.equal(field(doc.text, /^ {2}topicName: (.+)$/m) ?? doc.name, physical, `${doc.name}: topic name`);
    assert.equal(field(doc.text, /^ {2}partitions: (.+)$/m), String(spec.partitions), `${physical}: partitions`);
    assert.equal(field(doc.text, /^ {4}cleanup\.policy: (.+)$/m), spec.cleanupPolicy, `${physical}: cleanup.policy`);
    assert.equal(field(doc.text, /^ {4}retention\.ms: (.+)$/m), String(spec.retentionMs), `${physical}: retention.ms`);
    assert.equal(field(doc.text, /^ {4}strimzi\.io\/cluster: (.+)$/m), KAFKA_CLUSTER, `${physical}: cluster label`);
    assert.equal(field(doc.text, /^ {2}namespace: (.+)$/m), KAFKA_NAMESPACE, `${physical}: namespace`);
    // Replicated for a real cluster: 3 copies, a write acknowledged (acks=all) once 2 have it.
    assert.equal(field(doc.text, /^ {2}replicas: (.+)$/m), String(CLUSTER_REPLICATION.factor), `${physical}: replicas`);
    assert.equal(field(doc.text, /^ {4}min\.insync\.replicas: (.+)$/m), String(CLUSTER_REPLICATION.minInsyncReplicas), `${physical}: min.insync.replicas`);
  }
  assert.ok(CLUSTER_REPLICATION.factor >= 3 && CLUSTER_REPLICATION.minInsyncReplicas === CLUSTER_REPLICATION.factor - 1, 'one broker may be down without stopping writes');
}

let kubectlPath: string | undefined;
/** kubectl from scripts/ensure-kubectl.sh; its message is the failure when it cannot provide one. */
function kubectl(): string {
  if (kubectlPath !== undefined) return kubectlPath;
  const r = spawnSync('bash', [join(root, 'scripts/ensure-kubectl.sh')], { cwd: root, encoding: 'utf8', timeout: 10 * 60_000 });
  if (r.status !== 0) {
    assert.fail(`scripts/ensure-kubectl.sh failed (status ${r.status ?? r.signal}): ${(r.stderr || r.stdout || String(r.error ?? '')).trim()}`);
  }
  kubectlPath = r.stdout.trim().split('\n').at(-1) ?? '';
  assert.ok(kubectlPath, 'ensure-kubectl.sh printed no path');
  return kubectlPath;
}

describe('k8s manifests', () => {
  test('committed deploy/k8s/base equals what topology/generate-k8s.ts renders', () => {
    const rendered = renderK8s();
    const committed = readdirSync(baseDir).filter((f) => f.endsWith('.yaml')).sort();
    assert.deepEqual(committed, Object.keys(rendered).sort(), 'files in deploy/k8s/base (run `npm run k8s:generate`)');
    for (const [file, text] of Object.entries(rendered)) {
      assert.ok(text.startsWith(`${GENERATED_HEADER}\n`), `${file}: header`);
      assert.equal(readFileSync(join(baseDir, file), 'utf8'), text, `${file} is stale: run \`npm run k8s:generate\``);
    }
    assert.deepEqual(renderK8s(), rendered, 'rendering is deterministic');
  });

  test('every topology topic and changelog has a matching KafkaTopic', () => {
    const docs = parseStream(readFileSync(join(baseDir, 'kafka-topics.yaml'), 'utf8'));
    checkTopics(docs);
    for (const t of topics) assert.ok(docs.some((d) => d.name === topicResourceName(t.name)), `KafkaTopic for ${t.name}`);
  });

  test('topic names that are not DNS-1123 get a sanitised name and spec.topicName', () => {
    const changelogs = kafkaTopics().filter((t) => t.spec.schema === 'changelog');
    assert.ok(changelogs.length > 0);
    for (const { physical } of changelogs) assert.match(physical, /\./);
    const docs = parseStream(renderK8s({ topicPrefix: 'Crawl.' })['kafka-topics.yaml'] ?? '');
    const frontier = find(docs, 'KafkaTopic', 'crawl-frontier');
    assert.equal(field(frontier.text, /^ {2}topicName: (.+)$/m), 'Crawl.frontier');
    const urls = find(docs, 'KafkaTopic', 'crawl-scheduler-urls-changelog');
    assert.equal(field(urls.text, /^ {2}topicName: (.+)$/m), 'Crawl.scheduler.urls.changelog');
    assert.throws(() => topicResourceName('...'), /no valid Kubernetes name/);
  });

  test('the YAML emitter quotes what YAML would misread', () => {
    const text = toYaml([{ a: 'true', b: '8', c: '', d: 'x: y', e: 'plain-text', f: [], g: {}, h: [{ i: 1, j: ['k'] }], l: false }]);
    assert.equal(
      text,
      `${GENERATED_HEADER}\na: "true"\nb: "8"\nc: ""\nd: "x: y"\ne: plain-text\nf: []\ng: {}\nh:\n  - i: 1\n    j:\n      - k\nl: false\n`,
    );
  });

  test('kubectl kustomize renders the base', () => {
    const bin = kubectl();
    const r = spawnSync(bin, ['kustomize', join(baseDir)], { cwd: root, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
    assert.equal(r.status, 0, `kubectl kustomize failed: ${r.stderr || String(r.error ?? '')}`);
    const docs = parseStream(r.stdout);

    find(docs, 'Namespace', 'meguri');
    const config = find(docs, 'ConfigMap', 'meguri-config');
    assert.match(config.text, /MEGURI_TRANSPORT: kafka/);
    assert.match(config.text, /MEGURI_KAFKA_BROKERS: "?meguri-kafka-bootstrap\.kafka:9092"?/);
    // The KafkaTopics make the topics; pods never create them with other settings.
    assert.match(config.text, /MEGURI_CREATE_TOPICS: "false"/);

    for (const service of services) {
      const kind = service.stateful ? 'StatefulSet' : 'Deployment';
      const workload = find(docs, kind, `meguri-${service.name}`);
      assert.match(workload.text, /image: "?meguri:latest"?/, `${service.name}: image`);
      assert.match(workload.text, new RegExp(`- npx\\n\\s+- meguri\\n\\s+- run\\n\\s+- ${service.name}\\n`), `${service.name}: command`);
      assert.match(workload.text, /fieldPath: metadata\.name/, `${service.name}: instance id from the pod name`);
      assert.match(workload.text, /containerPort: 9464/, `${service.name}: metrics port`);
      assert.match(workload.text, /readOnlyRootFilesystem: true/, `${service.name}: read-only root`);
      assert.match(workload.text, /app\.kubernetes\.io\/part-of: meguri/, `${service.name}: part-of label`);
      assert.match(workload.text, /startupProbe:\n(?: {8,}.*\n)*? {8,}httpGet:\n\s+path: \/healthz\n\s+port: metrics/, `${service.name}: startup probe`);
      assert.match(workload.text, /livenessProbe:\n(?: {8,}.*\n)*? {8,}httpGet:\n\s+path: \/healthz\n\s+port: metrics/, `${service.name}: liveness probe`);
      assert.match(workload.text, /readinessProbe:\n(?: {8,}.*\n)*? {8,}httpGet:\n\s+path: \/readyz\n\s+port: metrics/, `${service.name}: readiness probe`);
      const pdb = find(docs, 'PodDisruptionBudget', `meguri-${service.name}`);
      assert.match(pdb.text, /^ {2}maxUnavailable: 1$/m, `${service.name}: one pod at a time`);
      assert.match(pdb.text, new RegExp(`app\\.kubernetes\\.io/component: ${service.name}\\n`), `${service.name}: PDB selector`);
      const partitions = topics.find((t) => t.name === service.reads[0])?.partitions;
      if (service.stateful) {
        assert.equal(docs.filter((d) => d.kind === 'HorizontalPodAutoscaler' && d.name === `meguri-${service.name}`).length, 0, 'the scheduler is scaled by hand');
      } else {
        const hpa = find(docs, 'HorizontalPodAutoscaler', `meguri-${service.name}`);
        assert.match(hpa.text, new RegExp(`kind: Deployment\\n\\s+name: meguri-${service.name}$`, 'm'), `${service.name}: HPA target`);
        assert.equal(field(hpa.text, /^ {2}maxReplicas: (.+)$/m), String(partitions), `${service.name}: at most one pod per input partition`);
        assert.ok(Number(field(hpa.text, /^ {2}minReplicas: (.+)$/m)) >= 1);
        assert.doesNotMatch(workload.text, /^ {2}replicas:/m, `${service.name}: the HPA owns the replica count`);
      }
      const metrics = find(docs, 'Service', `meguri-${service.name}-metrics`);
      assert.match(metrics.text, /prometheus\.io\/scrape: "true"/, `${service.name}: scrape annotation`);
      if (service.stateful) {
        assert.match(workload.text, /^ {2}volumeClaimTemplates:/m, `${service.name}: volumeClaimTemplates`);
        assert.match(workload.text, /podManagementPolicy: Parallel/);
        assert.match(workload.text, /mountPath: \/var\/lib\/meguri/);
        const headless = find(docs, 'Service', `meguri-${service.name}`);
        assert.match(headless.text, /clusterIP: None/);
      }
    }
    checkTopics(docs);
  });
});
