/** Writes schemas/json/<topic>.v1.schema.json from the zod schemas (draft 2020-12). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { topicSchemas, pageHeader, SCHEMA_VERSION } from './index.ts';

export function jsonSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // A pages record is a JSON header followed by the raw body: its file describes the header.
  const wire: Record<string, z.ZodType> = { ...topicSchemas, pages: pageHeader };
  for (const [name, schema] of Object.entries(wire)) {
    out[`${name}.v${SCHEMA_VERSION}.schema.json`] = {
      $id: `meguri:${name}:v${SCHEMA_VERSION}`,
      title: name === 'pages' ? `meguri pages record header, version ${SCHEMA_VERSION} (framed before the body bytes)` : `meguri ${name} record, version ${SCHEMA_VERSION}`,
      ...z.toJSONSchema(schema, { unrepresentable: 'any' }),
    };
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'json');
  mkdirSync(dir, { recursive: true });
  for (const [file, schema] of Object.entries(jsonSchemas())) {
    writeFileSync(join(dir, file), JSON.stringify(schema, null, 2) + '\n');
    console.log(`wrote schemas/json/${file}`);
  }
}
