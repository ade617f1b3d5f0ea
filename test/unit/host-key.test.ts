import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostKey } from '../../services/common/url.ts';

test('hostKey agrees with WHATWG URL.host for normalised and unusual URLs', () => {
  const urls = [
    'http://example.com/',
    'https://Example.COM/a?b#c',
    'http://h1.sim.test:8080/p/1.html',
    'http://h1.sim.test:80/x',
    'https://a.b:443/',
    'http://[::1]:3000/x',
    'http://user:pw@host.test/x',
    'http://host.test?q=1',
    'http://host.test#frag',
    'http://xn--bcher-kva.example/',
  ];
  for (const u of urls) assert.equal(hostKey(u), new URL(u).host.toLowerCase(), u);
});
