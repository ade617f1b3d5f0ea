/** Writes schemas/json/<topic>.v1.schema.json from the zod schemas (draft 2020-12). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { topicSchemas, SCHEMA_VERSION } from './index.ts';

export function jsonSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(topicSchemas)) {
    out[`${name}.v${SCHEMA_VERSION}.schema.json`] = {
      $id: `meguri:${name}:v${SCHEMA_VERSION}`,
      title: `meguri ${name} record, version ${SCHEMA_VERSION}`,
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
