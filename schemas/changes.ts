import { z } from 'zod';
import { version, httpUrl, epochMs, recordPointer } from './common.ts';

/** changes: what subscribers consume — a page appeared, changed in content, or went away. Keyed by URL. */
export const changeRecord = z.object({
  v: version,
  url: httpUrl,
  time: epochMs,
  kind: z.enum(['new', 'changed', 'gone']),
  title: z.string().max(1024).optional(),
  md5: z.string().optional(),
  fingerprint: z.string().optional(),
  page: recordPointer.optional().describe('The `pages` record holding the content (absent for gone).'),
  lang: z.string().optional().describe("Language of the page's main text (ISO 639-1), when known."),
});
export type ChangeRecord = z.infer<typeof changeRecord>;
