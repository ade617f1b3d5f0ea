// The Grafana dashboard in deploy/grafana asks only for series the services export.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ServiceMetrics } from '../../services/runtime/index.ts';
import { schedulerService } from '../../services/scheduler/service.ts';
import { fetcherService } from '../../services/fetcher/service.ts';

const dashboardFile = fileURLToPath(new URL('../../deploy/grafana/meguri.json', import.meta.url));

interface Panel {
  title: string;
  targets: { expr: string }[];
}

test('every series on the Grafana dashboard is exported by a service', async () => {
  const dashboard = JSON.parse(readFileSync(dashboardFile, 'utf8')) as { uid: string; panels: Panel[] };
  assert.ok(dashboard.uid);
  const metrics = new ServiceMetrics('test');
  schedulerService().registerMetrics?.(metrics.registry);
  const fetcher = fetcherService({ resolve: [] });
  fetcher.registerMetrics?.(metrics.registry);
  try {
    const exported = new Set((await metrics.registry.getMetricsAsJSON()).map((m) => m.name));
    const asked = new Set<string>();
    for (const panel of dashboard.panels) {
      assert.ok(panel.targets.length > 0, `${panel.title}: no query`);
      for (const t of panel.targets) for (const m of t.expr.matchAll(/\bmeguri_[a-z_]+/g)) asked.add(m[0].replace(/_(bucket|count|sum)$/, ''));
    }
    assert.ok(asked.size >= 15, `the dashboard asks for ${asked.size} series`);
    const missing = [...asked].filter((name) => !exported.has(name));
    assert.deepEqual(missing, [], 'series on the dashboard that no service exports');
  } finally {
    await fetcher.fetcher.close();
  }
});
