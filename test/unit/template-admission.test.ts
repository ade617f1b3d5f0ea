import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TaskStores } from '../../services/runtime/task-stores.ts';
import { NOT_IN_MEMORY } from '../../services/runtime/index.ts';
import { TemplateLedger, templateKey } from '../../services/scheduler/templates.ts';
import type { TemplateRules } from '../../services/scheduler/templates.ts';
import { withTaskStores, commitStores } from '../support/task-stores.ts';

const rules = (over: Partial<TemplateRules> = {}): TemplateRules => ({
  maxUrlsPerTemplate: 3,
  templateRoundSize: 2,
  queryRestriction: 'off',
  trapProbePages: 0,
  trapDuplicateShare: 1,
  trapNewUrls: 0,
  ...over,
});

function withLedgers(r: TemplateRules, fn: (async: TemplateLedger, sync: TemplateLedger, stores: TaskStores) => Promise<void>): Promise<void> {
  return withTaskStores(['a', 'b'], (stores) => fn(new TemplateLedger(stores.store<string>('a'), r, async () => false), new TemplateLedger(stores.store<string>('b'), r, async () => false), stores), 'meguri-templates-');
}

const commit = commitStores;

const host = 'shop.example:80';
const urls = Array.from({ length: 6 }, (_, i) => `http://${host}/item/${1000 + i}.html`);

describe('template admission without a promise', () => {
  it('admits and counts exactly like admit() once the entry is in memory', async () => {
    await withLedgers(rules(), async (asyncLedger, syncLedger, stores) => {
      const b = stores.store<string>('b');
      const viaAsync = [];
      const viaSync = [];
      for (const url of urls) {
        viaAsync.push(await asyncLedger.admit(host, url));
        await b.prefetch([templateKey(host, url)]);
        const admission = syncLedger.admitInMemory(host, url);
        assert.notEqual(admission, NOT_IN_MEMORY);
        viaSync.push(admission);
      }
      // Three admitted (rounds 0, 0, 1), then the template's budget is spent.
      assert.deepEqual(viaSync, viaAsync);
      assert.deepEqual(viaAsync.map((a) => (a.ok ? a.round : a.reason)), [0, 0, 1, 'template-budget', 'template-budget', 'template-budget']);
      assert.deepEqual([...b.pending], [...stores.store<string>('a').pending]);
    });
  });

  it('answers NOT_IN_MEMORY without counting when the entry would take a read', async () => {
    await withLedgers(rules(), async (asyncLedger, syncLedger, stores) => {
      // A committed count that only RocksDB holds (a fresh store's cache is empty).
      await asyncLedger.admit(host, urls[0]!);
      await commit(stores);
      const reopened = new TemplateLedger(stores.store<string>('a'), rules(), async () => false);
      stores.store<string>('a').discard();
      assert.equal(reopened.admitInMemory(host, urls[1]!), NOT_IN_MEMORY);
      assert.equal(stores.store<string>('a').pendingCount, 0);
      await stores.store<string>('a').prefetch([templateKey(host, urls[1]!)]);
      assert.deepEqual(reopened.admitInMemory(host, urls[1]!), { ok: true, round: 0 });
      assert.deepEqual(syncLedger.admitInMemory(host, 'http://other.example:80/x.html'), NOT_IN_MEMORY);
    });
  });

  it('leaves a query-less form to the async path and refuses queries under "all" without a read', async () => {
    await withLedgers(rules({ queryRestriction: 'form' }), async (_a, syncLedger) => {
      assert.equal(syncLedger.admitInMemory(host, `http://${host}/search?q=1`), NOT_IN_MEMORY);
    });
    await withLedgers(rules({ queryRestriction: 'all' }), async (_a, syncLedger, stores) => {
      assert.deepEqual(syncLedger.admitInMemory(host, `http://${host}/search?q=1`), { ok: false, reason: 'query' });
      assert.equal(stores.store<string>('b').pendingCount, 0);
    });
  });

  it('refuses a template judged a trap unless the host rule says judgeTraps: false (traps = false), within the budget', async () => {
    await withLedgers(rules({ maxUrlsPerTemplate: 5, trapProbePages: 2, trapDuplicateShare: 1, trapNewUrls: 2 }), async (ledger, syncLedger, stores) => {
      // Two URLs known, the first fetched, two more found, the second fetched like the first: a trap.
      for (const url of urls.slice(0, 2)) assert.equal((await ledger.admit(host, url)).ok, true);
      assert.equal(await ledger.firstFetch(host, urls[0]!, 'aaaa', (a, b) => a === b), false);
      for (const url of urls.slice(2, 4)) assert.equal((await ledger.admit(host, url)).ok, true);
      assert.equal(await ledger.firstFetch(host, urls[1]!, 'aaaa', (a, b) => a === b), true, 'same text and 2 new URLs');
      assert.equal(await ledger.isTrap(host, urls[2]!), true);
      assert.deepEqual(await ledger.admit(host, urls[4]!), { ok: false, reason: 'template-budget' });
      // The operator's undo: admitted again, counted against the budget of 5.
      assert.deepEqual(await ledger.admit(host, urls[4]!, false, false), { ok: true, round: 2 });
      await stores.store<string>('b').prefetch([templateKey(host, urls[5]!)]);
      assert.deepEqual(syncLedger.admitInMemory(host, urls[5]!, false, undefined, false), { ok: true, round: 0 }, 'the other ledger never judged it');
      assert.deepEqual(await ledger.admit(host, urls[5]!, false, false), { ok: false, reason: 'template-budget' }, 'the budget still bounds it');
    });
  });
});
