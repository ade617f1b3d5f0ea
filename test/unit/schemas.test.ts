import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fieldReference, jsonSchemas, withFieldReference } from '../../schemas/generate.ts';
import { topicSchemas } from '../../schemas/index.ts';
import { topics } from '../../topology/index.ts';

const dir = new URL('../../schemas/json/', import.meta.url);

test('the committed JSON Schema files match the zod schemas (run `npm run schemas:generate`)', () => {
  const generated = jsonSchemas();
  assert.deepEqual(readdirSync(dir).sort(), Object.keys(generated).sort());
  for (const [file, schema] of Object.entries(generated)) {
    assert.deepEqual(JSON.parse(readFileSync(new URL(file, dir), 'utf8')), JSON.parse(JSON.stringify(schema)), file);
  }
});

test("docs/topics.md's field reference is the one the schemas generate (run `npm run schemas:generate`)", () => {
  const doc = readFileSync(new URL('../../docs/topics.md', import.meta.url), 'utf8');
  assert.equal(withFieldReference(doc), doc);
  const reference = fieldReference();
  // What a consumer in another language must not have to guess is stated beside the fields.
  for (const needle of ['re-encoded as UTF-8', 'exactly 16 lower-case hex digits', 'decimal string', "topic prefix included", 'first &lt;title>', '`host[:port]`']) assert.ok(reference.includes(needle), needle);
});

test('every topology topic has a schema, and every schema a topic', () => {
  assert.deepEqual(topics.map((t) => t.schema).sort(), Object.keys(topicSchemas).sort());
});

test('links schema rejects a record of an unknown type and accepts each known one', () => {
  const links = topicSchemas.links;
  assert.equal(links.safeParse({ v: 1, type: 'nope', url: 'http://a.test/' }).success, false);
  assert.equal(links.safeParse({ v: 1, type: 'seed', url: 'http://a.test/', addedAt: 1 }).success, true);
  assert.equal(links.safeParse({ v: 2, type: 'seed', url: 'http://a.test/', addedAt: 1 }).success, false, 'version is checked');
});
