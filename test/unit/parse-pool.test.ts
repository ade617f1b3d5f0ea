import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ParsePool } from '../../services/parser/parse-pool.ts';
import { pageToRecords } from '../../services/parser/outcome.ts';
import { SCHEMA_VERSION, pageRecord } from '../../schemas/index.ts';

test('the parse pool gives the same records as parsing on the event loop', async () => {
  const body = readFileSync(new URL('../fixtures/pages/article.html', import.meta.url));
  const page = pageRecord.parse({
    v: SCHEMA_VERSION,
    request: { v: SCHEMA_VERSION, requestId: 'r1', url: 'http://a.test/x.html', host: 'a.test', reason: 'new', score: 1, depth: 2, cgiHops: 0, attempt: 1, issuedAt: 1 },
    finalUrl: 'http://a.test/x.html',
    redirects: [],
    status: 200,
    headers: { 'content-type': 'text/html' },
    contentType: 'text/html',
    body,
    bodyTruncated: false,
    bytes: body.length,
    decodedBytes: body.length,
    timing: { startedAt: 1, totalMs: 3 },
    fetchedAt: 2,
  });
  const pool = new ParsePool(2);
  try {
    const pointer = { topic: 'pages', partition: 0, offset: '7' };
    const results = await Promise.all([pool.run(page, pointer), pool.run(page, pointer), pool.run(page, pointer)]);
    const direct = pageToRecords(page, pointer);
    for (const r of results) {
      assert.deepEqual(r.outcome, direct.outcome);
      assert.deepEqual(r.links, direct.links);
    }
    assert.ok(direct.links.length > 10);
  } finally {
    await pool.close();
  }
});
