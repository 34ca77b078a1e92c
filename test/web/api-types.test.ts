import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateApiTypes, SCHEMA_FILE } from '../../web/scripts/openapi-types.js';

describe('web client API types', () => {
  it('web/src/api/schema.d.ts is what the server’s OpenAPI document generates (run `npm run web:types` after an API change)', async () => {
    expect(await readFile(SCHEMA_FILE, 'utf8')).toBe(await generateApiTypes());
  });
});
