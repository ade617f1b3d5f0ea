/** The scheduler's stored forms and small structures: ready heap, compact URL state, out-links, index keys. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReadyHeap } from '../../services/scheduler/ready-heap.ts';
import { blcTieBreak, decodeOutLinks, encodeOutLinks, md5Of, packMd5, packRevisit, queueKey, revisitKey, revisitKeyUrl, revisitOf, roundScore } from '../../services/scheduler/state.ts';

describe('scheduler building blocks', () => {
  it('the ready heap returns hosts by time', () => {
    const heap = new ReadyHeap();
    [5, 1, 9, 3, 7].forEach((t) => heap.push(t, `h${t}`));
    const out: number[] = [];
    for (let e = heap.pop(); e; e = heap.pop()) out.push(e.time);
    assert.deepEqual(out, [1, 3, 5, 7, 9]);
  });

  it('per-URL state is stored compactly and read back exactly', () => {
    const md5 = '0123456789abcdef0123456789abcdef';
    assert.equal(packMd5(md5).length, 22);
    assert.equal(md5Of({ m: packMd5(md5) }), md5);
    assert.equal(md5Of({ m: md5 }), md5, 'hex from older stores still reads');
    const r = { a: 5_184_000, s: 4_320_000, m: 3, c: 86_400, l: 1_764_000_000, i: 172_800 };
    assert.equal(packRevisit(r).length, 32);
    assert.deepEqual(revisitOf({ r: packRevisit(r) }), r);
    assert.deepEqual(revisitOf({ r }), r, 'the object form from older stores still reads');
    assert.deepEqual(revisitOf({ r: packRevisit({ ...r, a: r.a + 0.4, l: r.l + 0.6 }) }), { ...r, l: r.l + 1 }, 'whole seconds');
    assert.equal(revisitOf({}), undefined);
    assert.equal(roundScore(2.659976811846718), 2.659977);
  });

  it('out-links are stored relative to the page origin and read back whole; BLC tie-breaks stay below one link', () => {
    const links = ['http://a.test/x', 'http://a.test/y?q=1', 'https://a.test/z', 'http://b.test/', 'http://a.test:8080/p'];
    const stored = encodeOutLinks(links, 'http://a.test/page');
    assert.equal(stored, '/x\n/y?q=1\nhttps://a.test/z\nhttp://b.test/\nhttp://a.test:8080/p');
    assert.deepEqual(decodeOutLinks(stored, 'http://a.test/page'), links);
    const shallow = blcTieBreak('http://a.test/x.html');
    const deep = blcTieBreak('http://a.test/a/b/x.html');
    const longer = blcTieBreak('http://a.test/xxxxxxx.html');
    assert.ok(shallow > deep && shallow > longer && longer > deep);
    assert.ok(shallow < 1 && deep >= 0);
  });

  it('revisit index keys sort by due time and carry their URL', () => {
    const url = 'http://a.test/x?y=1';
    assert.equal(revisitKeyUrl(revisitKey(1_764_000_000_000, url)), url);
    assert.ok(revisitKey(99, 'http://z.test/') < revisitKey(100, 'http://a.test/'));
  });

  it('queue keys sort by host, then higher score, then discovery order', () => {
    const keys = [queueKey('a', 1, 2), queueKey('a', 5, 3), queueKey('a', 1, 1), queueKey('b', 100, 0)];
    assert.deepEqual([...keys].sort(), [queueKey('a', 5, 3), queueKey('a', 1, 1), queueKey('a', 1, 2), queueKey('b', 100, 0)]);
  });
});

