/**
 * A service as a pod runs it: `meguri run parser` on Kafka serves /healthz, /readyz and Prometheus
 * /metrics, and exits 0 on SIGTERM after leaving its group; `meguri topics describe` shows the
 * topology against the live cluster.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { kafkaBrokers, tempDir, removeDir, uniquePrefix, waitFor } from '../support/transports.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configMapData, schedulerConfigFile } from '../../topology/generate-k8s.ts';
import { freePort } from '../support/ports.ts';

const bin = fileURLToPath(new URL('../../bin/meguri.js', import.meta.url));

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe('meguri run (service lifecycle)', { timeout: 120_000 }, () => {
  it('serves health, readiness and metrics, and shuts down cleanly on SIGTERM', async () => {
    const brokers = kafkaBrokers().join(',');
    const prefix = uniquePrefix();
    const created = spawnSync(process.execPath, [bin, 'topics', 'create', '--kafka', brokers, '--topic-prefix', prefix, '--partitions', '2'], { encoding: 'utf8' });
    assert.equal(created.status, 0, created.stderr);
    const described = spawnSync(process.execPath, [bin, 'topics', 'describe', '--kafka', brokers, '--topic-prefix', prefix, '--json'], { encoding: 'utf8' });
    assert.equal(described.status, 0, described.stderr);
    const rows = JSON.parse(described.stdout) as { topic: string; live: { partitions: unknown[] } | null; writers: string[]; readers: string[] }[];
    const pages = rows.find((r) => r.topic === `${prefix}pages`)!;
    assert.equal(pages.live?.partitions.length, 2);
    assert.deepEqual(pages.writers, ['fetcher']);
    assert.deepEqual(pages.readers, ['parser']);
    assert.ok(rows.some((r) => r.topic === `${prefix}scheduler.urls.changelog`));

    const port = await freePort();
    const dataDir = tempDir();
    const child = spawn(process.execPath, [bin, 'run', 'parser', '--kafka', brokers, '--topic-prefix', prefix, '--data', dataDir, '--http-port', String(port)], {
      env: { ...process.env, MEGURI_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let logs = '';
    child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor('health endpoint', async () => (await get(port, '/healthz').catch(() => ({ status: 0, body: '' }))).status === 200, 30_000, 100);
      await waitFor('ready (partitions assigned)', async () => (await get(port, '/readyz')).status === 200, 60_000, 200);
      const metrics = await get(port, '/metrics');
      assert.equal(metrics.status, 200);
      for (const name of ['meguri_records_in_total', 'meguri_consumer_lag', 'meguri_batch_processing_seconds', 'meguri_assigned_partitions', 'meguri_process_cpu_user_seconds_total']) {
        assert.match(metrics.body, new RegExp(name), `metric ${name}`);
      }
      assert.match(metrics.body, /meguri_assigned_partitions\{service="parser"\} 2/);
      child.kill('SIGTERM');
      assert.equal(await exited, 0, 'graceful exit');
      const lines = logs.trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
      assert.ok(lines.some((l) => l.msg === 'shutting down gracefully'));
      assert.ok(lines.some((l) => l.msg === 'service stopped'));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      removeDir(dataDir);
    }
  });

  it('starts every service with the environment of the generated Kubernetes ConfigMap', async () => {
    const brokers = kafkaBrokers().join(',');
    const prefix = uniquePrefix();
    const created = spawnSync(process.execPath, [bin, 'topics', 'create', '--kafka', brokers, '--topic-prefix', prefix, '--partitions', '2'], { encoding: 'utf8' });
    assert.equal(created.status, 0, created.stderr);
    // The pods' environment as generated, with only where Kafka, the volume and the port are replaced.
    const base: Record<string, string | undefined> = { ...process.env };
    for (const key of Object.keys(base)) if (key.startsWith('MEGURI_') || key === 'KAFKA_BROKERS') delete base[key];
    for (const service of ['scheduler', 'fetcher', 'parser']) {
      const port = await freePort();
      const dataDir = tempDir();
      const env: Record<string, string | undefined> = { ...base, ...configMapData(prefix), MEGURI_KAFKA_BROKERS: brokers, MEGURI_DATA_DIR: dataDir, MEGURI_HTTP_PORT: String(port), MEGURI_HTTP_HOST: '127.0.0.1', MEGURI_INSTANCE_ID: `${service}-0`, MEGURI_LOG_LEVEL: 'warn' };
      if (service === 'scheduler') {
        // The scheduler pod also mounts its settings file from the second ConfigMap.
        const file = join(dataDir, 'scheduler.json');
        writeFileSync(file, schedulerConfigFile());
        env.MEGURI_SCHEDULER_CONFIG = file;
      }
      const child = spawn(process.execPath, [bin, 'run', service], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        await waitFor(`${service} ready`, async () => {
          if (child.exitCode !== null) throw new Error(`${service} exited ${child.exitCode}: ${stderr}`);
          return (await get(port, '/readyz').catch(() => ({ status: 0, body: '' }))).status === 200;
        }, 60_000, 200);
        child.kill('SIGTERM');
        assert.equal(await exited, 0, `${service} exits cleanly: ${stderr}`);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        removeDir(dataDir);
      }
    }
  });
});
