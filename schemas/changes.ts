import { z } from 'zod';
import { version, httpUrl, epochMs, recordPointer, TEXT_MD5, TEXT_FINGERPRINT, PAGE_TITLE } from './common.ts';
import { textDiff } from './text.ts';

/** changes: what subscribers consume — a page appeared, changed in content, or went away. Keyed by URL. */
export const changeRecord = z.object({
  v: version,
  url: httpUrl.describe('The page, normalised; also the record key.'),
  time: epochMs.describe('When the scheduler decided (epoch ms).'),
  kind: z
    .enum(['new', 'changed', 'gone'])
    .describe('new: first fetch; changed: the main text changed (a new md5 whose fingerprint differs by more than 3 bits); gone: 404/410, or the host unreachable on 3 revisits in a row.'),
  title: z.string().max(1024).optional().describe(PAGE_TITLE),
  md5: z.string().optional().describe(TEXT_MD5),
  fingerprint: z.string().optional().describe(TEXT_FINGERPRINT),
  page: recordPointer.optional().describe('The `pages` record holding the content (absent for gone).'),
  lang: z.string().optional().describe("Language of the page's main text (ISO 639-1), when known."),
  diff: textDiff.optional(),
});
export type ChangeRecord = z.infer<typeof changeRecord>;
