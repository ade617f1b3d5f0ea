import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AliasFileError, canonicalUrl, learnedAlias, moveToOrigin, parseAliasFile } from '../../services/common/aliases.ts';
import { openSchedulerDriver, seed, link } from '../support/scheduler-driver.ts';
import { linksOf } from '../../services/common/link-bundles.ts';

describe('server aliases', () => {
  it('alias file: pairs, comments, chains resolved; bad lines and cycles refused with the line named', () => {
    const map = parseAliasFile('# aliases\nexample.com www.example.com\nEXAMPLE.net. example.com  # chain\n\n');
    assert.deepEqual([...map], [['example.com', 'www.example.com'], ['example.net', 'www.example.com']]);
    assert.throws(() => parseAliasFile('a.test\n', 'f'), (e: Error) => e instanceof AliasFileError && /f line 1: expected "alias canonical"/.test(e.message));
    assert.throws(() => parseAliasFile('ok.test b.test\nhttp://x/ y.test\n', 'f'), /f line 2: "http:\/\/x\/" is not a host name/);
    assert.throws(() => parseAliasFile('a.test b.test\nb.test a.test\n', 'f'), /cycle/);
    assert.throws(() => parseAliasFile('a.test a.test\n', 'f'), /alias of itself/);
    assert.throws(() => parseAliasFile('a.test b.test\na.test c.test\n', 'f'), /line 2: a\.test is already an alias of b\.test/);
  });

  it('URLs move to the canonical host with scheme, port, path and query kept', () => {
    const map = new Map([['example.com', 'www.example.com']]);
    assert.equal(canonicalUrl('http://example.com/a?b=1', map), 'http://www.example.com/a?b=1');
    assert.equal(canonicalUrl('https://example.com:8443/', map), 'https://www.example.com:8443/');
    assert.equal(canonicalUrl('http://www.example.com/x', map), 'http://www.example.com/x');
    assert.equal(canonicalUrl('http://notexample.com/x', map), 'http://notexample.com/x');
  });

  it('learned: only a root answering 301/308 with another host', () => {
    assert.equal(learnedAlias('http://example.com/', 301, 'https://www.example.com/'), 'https://www.example.com');
    assert.equal(learnedAlias('http://example.com/', 308, 'http://www.example.com:8080/home'), 'http://www.example.com:8080');
    assert.equal(learnedAlias('http://example.com/', 302, 'https://www.example.com/'), undefined, 'temporary');
    assert.equal(learnedAlias('http://example.com/a', 301, 'https://www.example.com/a'), undefined, 'not the root');
    assert.equal(learnedAlias('http://old-name.test/', 301, 'http://new-name.test/'), 'http://new-name.test', 'root to root of another domain');
    assert.equal(learnedAlias('http://a.test/', 301, 'http://b.test/landing'), undefined, 'root to a page of another domain: a link, not an alias');
    assert.equal(learnedAlias('http://example.com/', 301, 'https://example.com/'), undefined, 'same host (scheme change)');
    assert.equal(moveToOrigin('http://example.com/p?q=1', 'https://www.example.com'), 'https://www.example.com/p?q=1');
  });
});

describe('server aliases in the scheduler', () => {
  it('links to an alias from the settings go to the canonical host; nothing is asked of the alias', async () => {
    const s = await openSchedulerDriver({ aliases: { 'example.com': 'www.example.com' }, minIntervalMs: 0, politeness: { kFactor: 0 } });
    await s.send([seed('http://example.com/'), link('http://example.com/a', 'http://other.test/')]);
    const forwarded = s.events('links');
    assert.deepEqual(forwarded.map((r) => r.url), ['http://www.example.com/', 'http://www.example.com/a']);
    assert.equal(s.progress.totals().aliasForwarded, 2);
    // The forwarded records reach the canonical host's partition (here the same one, fed back by the driver).
    const urls: string[] = [];
    for (let i = 0; i < 10; i++) {
      for (const r of s.requests()) {
        urls.push(r.url);
        await s.answer(r);
      }
      await s.advance(20);
    }
    assert.deepEqual(urls, ['http://www.example.com/robots.txt', 'http://www.example.com/', 'http://www.example.com/a']);
    await s.stop();
  });

  it('a root that permanently redirects to another host makes the host an alias: its later links move there', async () => {
    const s = await openSchedulerDriver({ minIntervalMs: 0, politeness: { kFactor: 0 } });
    await s.send(seed('http://example.com/'));
    const root = await s.nextPage();
    await s.answer(root, { status: 301, result: 'redirect', location: 'https://www.example.com/', md5: undefined });
    assert.equal(s.progress.totals().aliasesLearned, 1);
    s.driver.readOutput('links');
    await s.send(link('http://example.com/news?id=3', 'http://other.test/'));
    assert.deepEqual(s.driver.readOutput('links').flatMap((r) => linksOf(r.value).map((l) => l.url)), ['https://www.example.com/news?id=3']);
    assert.equal(s.progress.totals().aliasForwarded, 1);
    await s.stop();
  });
});
