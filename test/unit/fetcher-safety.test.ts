// The fetcher's pure safety logic: the address policy and its CIDR parsing, redirect targets and
// header decoding, the 100-Continue scanner and the classification of undici's protocol errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors as undiciErrors } from 'undici';
import { AddressPolicy, cidrContains, embeddedIpv4, formatIp, isNonPublicAddress, nonPublicReason, parseCidr, parseIp } from '../../services/fetcher/address-policy.ts';
import { classifyError, errorMessage, FETCH_ERRORS, FetchError, isRetryable } from '../../services/fetcher/errors.ts';
import { scanInterim } from '../../services/fetcher/interim.ts';
import { decodeHeaderUtf8, MAX_URL_LENGTH, resolveRedirect, truncateText } from '../../services/fetcher/location.ts';

function ip(text: string) {
  const p = parseIp(text);
  assert.ok(p !== undefined, `${text} parses`);
  return p;
}

describe('IP and CIDR parsing', () => {
  it('parses IPv4 and every IPv6 spelling to the same bytes', () => {
    assert.deepEqual([...ip('192.0.2.7').bytes], [192, 0, 2, 7]);
    const forms = ['::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:0001', '[::FFFF:127.0.0.1]', '0::ffff:127.0.0.1'];
    for (const f of forms) assert.equal(formatIp(ip(f)), '::ffff:7f00:1', f);
    assert.equal(formatIp(ip('2001:db8:0:0:1:0:0:1')), '2001:db8::1:0:0:1');
    assert.equal(formatIp(ip('::')), '::');
    assert.equal(formatIp(ip('1::')), '1::');
    assert.equal(formatIp(ip('fe80::1')), 'fe80::1');
    assert.equal(formatIp(ip('1:2:3:4:5:6:7:8')), '1:2:3:4:5:6:7:8');
  });

  it('rejects what is not an address: names, zones, junk, out-of-range parts', () => {
    for (const bad of ['', 'localhost', 'fe80::1%eth0', '1.2.3', '256.1.1.1', '::ffff:1.2.3.4.5', '1:2:3:4:5:6:7:8:9', '0x7f.1']) {
      assert.equal(parseIp(bad), undefined, bad);
    }
  });

  it('parses ranges and single addresses; bad prefixes are named', () => {
    const r = parseCidr('10.1.2.3/8');
    assert.equal(r.prefix, 8);
    assert.ok(cidrContains(r, ip('10.200.0.1')));
    assert.ok(!cidrContains(r, ip('11.0.0.1')));
    assert.equal(parseCidr('192.0.2.7').prefix, 32);
    assert.equal(parseCidr('fd00::1').prefix, 128);
    assert.ok(cidrContains(parseCidr('100.64.0.0/10'), ip('100.127.255.255')));
    assert.ok(!cidrContains(parseCidr('100.64.0.0/10'), ip('100.128.0.0')));
    assert.ok(cidrContains(parseCidr('fe80::/10'), ip('febf::1')));
    assert.ok(!cidrContains(parseCidr('fe80::/10'), ip('fec0::1')));
    assert.ok(cidrContains(parseCidr('0.0.0.0/0'), ip('8.8.8.8')));
    assert.ok(!cidrContains(parseCidr('0.0.0.0/0'), ip('::1')), 'families never mix');
    assert.throws(() => parseCidr('10.0.0.0/33'), /prefix length must be 0\.\.32/);
    assert.throws(() => parseCidr('::/129'), /0\.\.128/);
    assert.throws(() => parseCidr('10.0.0.0/x'), /prefix length/);
    assert.throws(() => parseCidr('intranet/8'), /not an IP address or CIDR range/);
  });
});

describe('non-public address ranges', () => {
  const forbidden: [string, RegExp][] = [
    ['127.0.0.1', /loopback/],
    ['127.255.255.254', /loopback/],
    ['10.0.0.1', /RFC 1918/],
    ['172.16.0.1', /RFC 1918/],
    ['172.31.255.255', /RFC 1918/],
    ['192.168.1.1', /RFC 1918/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['169.254.169.254', /link-local.*metadata/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.251', /multicast/],
    ['239.255.255.250', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['240.0.0.1', /reserved/],
    ['198.18.0.1', /benchmarking/],
    ['192.0.2.1', /documentation/],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['fe80::1', /link-local/],
    ['ff02::1', /multicast/],
    ['2001:db8::1', /documentation/],
    ['::ffff:127.0.0.1', /IPv4-mapped form of 127\.0\.0\.1, loopback/],
    ['::ffff:a9fe:a9fe', /IPv4-mapped form of 169\.254\.169\.254/],
    ['::ffff:10.0.0.1', /IPv4-mapped.*RFC 1918/],
    ['64:ff9b::7f00:1', /NAT64 form of 127\.0\.0\.1/],
    ['64:ff9b::169.254.169.254', /NAT64 form of 169\.254\.169\.254/],
    ['64:ff9b:1::1', /local-use NAT64/],
    ['2002:7f00:1::1', /6to4 form of 127\.0\.0\.1/],
    ['2002:c0a8:101::1', /6to4 form of 192\.168\.1\.1/],
    // Teredo client 10.0.0.1 is stored inverted: ~0a000001 = f5ff:fffe.
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', /Teredo client form of 10\.0\.0\.1/],
    ['::127.0.0.1', /IPv4-compatible form of 127\.0\.0\.1/],
    ['::8.8.8.8', /reserved/],
  ];
  for (const [address, why] of forbidden) {
    it(`refuses ${address}`, () => {
      const reason = nonPublicReason(ip(address));
      assert.ok(reason !== undefined, `${address} should not be public`);
      assert.match(reason, why);
      assert.equal(isNonPublicAddress(address), true);
    });
  }

  it('lets public unicast through, also when embedded in NAT64, 6to4 or mapped forms', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '169.255.0.1', '2606:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
      assert.equal(nonPublicReason(ip(a)), undefined, a);
      assert.equal(isNonPublicAddress(a), false, a);
    }
    assert.equal(isNonPublicAddress('not an ip'), true, 'what cannot be parsed is not dialled');
  });

  it('finds the IPv4 address inside the embedding forms', () => {
    assert.deepEqual(
      embeddedIpv4(ip('2001:0:4136:e378:8000:63bf:3fff:fdd2')).map((e) => [e.form, formatIp(e.v4)]),
      [
        ['Teredo server', '65.54.227.120'],
        ['Teredo client', '192.0.2.45'],
      ],
    );
    assert.deepEqual(
      embeddedIpv4(ip('::ffff:1.2.3.4')).map((e) => [e.form, formatIp(e.v4), e.sameHost]),
      [['IPv4-mapped', '1.2.3.4', true]],
    );
    assert.deepEqual(embeddedIpv4(ip('2606:4700::1111')), []);
    assert.deepEqual(embeddedIpv4(ip('1.2.3.4')), []);
  });
});

describe('AddressPolicy', () => {
  it('system DNS: public addresses pass, non-public ones are refused with the reason and the way out', () => {
    const p = new AddressPolicy();
    assert.deepEqual(p.check('8.8.8.8', 'dns', 'example.com'), { allowed: true });
    const v = p.check('169.254.169.254', 'dns', 'evil.example');
    assert.equal(v.allowed, false);
    assert.match(v.allowed ? '' : v.reason, /^evil\.example resolves to 169\.254\.169\.254, which is not a public address \(link-local.*\); allow it with --allow-address$/);
    const lit = p.check('::ffff:7f00:1', 'literal');
    assert.match(lit.allowed ? '' : lit.reason, /^::ffff:7f00:1, which is not a public address \(IPv4-mapped form of 127\.0\.0\.1, loopback\)/);
  });

  it('trusts an address reached through the --resolve map, and only that way', () => {
    const p = new AddressPolicy({ onlyAllowed: true });
    assert.deepEqual(p.check('127.0.0.1', 'resolve-map', 'h1.sim.test'), { allowed: true });
    const lit = p.check('127.0.0.1', 'literal');
    assert.equal(lit.allowed, false);
    assert.match(lit.allowed ? '' : lit.reason, /IP-literal URL host 127\.0\.0\.1 is not dialled under --dns static/);
    assert.equal(p.check('8.8.8.8', 'literal').allowed, false, 'static DNS dials no public literal either');
    const sys = new AddressPolicy();
    assert.equal(sys.check('127.0.0.1', 'dns', 'rebind.example').allowed, false, 'a DNS answer equal to a mapped address is not trusted');
  });

  it('--allow-address ranges open addresses in both modes, including the mapped and NAT64 forms of an allowed IPv4 host', () => {
    const p = new AddressPolicy({ allow: ['10.0.0.0/8', '127.0.0.1', 'fd00::/8'], onlyAllowed: true });
    assert.deepEqual(p.allowed, ['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);
    for (const a of ['10.9.8.7', '127.0.0.1', 'fd00::5', '::ffff:10.0.0.1', '64:ff9b::a00:1']) assert.equal(p.check(a, 'literal').allowed, true, a);
    for (const a of ['127.0.0.2', '8.8.8.8', 'fe80::1', '2002:a00:1::1']) assert.equal(p.check(a, 'literal').allowed, false, a);
    const sys = new AddressPolicy({ allow: ['169.254.169.254/32'] });
    assert.equal(sys.check('169.254.169.254', 'dns', 'metadata.internal').allowed, true);
    assert.equal(sys.check('169.254.169.253', 'dns', 'metadata.internal').allowed, false);
    assert.equal(new AddressPolicy({ allow: ['0.0.0.0/0', '::/0'] }).check('::1', 'literal').allowed, true);
  });

  it('refuses a malformed allow entry at start, and an unparseable address at check time', () => {
    assert.throws(() => new AddressPolicy({ allow: ['10.0.0.0/99'] }), /--allow-address: "10\.0\.0\.0\/99": prefix length/);
    assert.throws(() => new AddressPolicy({ allow: ['*.sim.test'] }), /--allow-address: .*not an IP address/);
    assert.equal(new AddressPolicy({ allow: ['0.0.0.0/0'] }).check('fe80::1%eth0', 'dns', 'x').allowed, false);
  });
});

describe('redirect targets and header text', () => {
  const base = new URL('http://a.test/dir/page');

  it('re-reads a UTF-8 Location (latin1 string from undici) and keeps bytes that are not UTF-8', () => {
    const utf8AsLatin1 = Buffer.from('/café/ü?q=日本', 'utf8').toString('latin1');
    assert.equal(decodeHeaderUtf8(utf8AsLatin1), '/café/ü?q=日本');
    assert.equal(decodeHeaderUtf8('/caf\u00e9'), '/caf\u00e9', 'a lone 0xE9 byte is latin1 é');
    assert.equal(decodeHeaderUtf8('/plain'), '/plain');
    assert.equal(resolveRedirect(decodeHeaderUtf8(utf8AsLatin1), base).href, 'http://a.test/caf%C3%A9/%C3%BC?q=%E6%97%A5%E6%9C%AC');
    assert.equal(resolveRedirect('/caf\u00e9', base).href, 'http://a.test/caf%C3%A9');
  });

  it('resolves relative targets and drops the fragment', () => {
    assert.equal(resolveRedirect('next#frag', base).href, 'http://a.test/dir/next');
    assert.equal(resolveRedirect('//b.test/x', base).href, 'http://b.test/x');
  });

  it('refuses unparseable, non-http and over-long targets with MEGURI_ERR_BAD_REDIRECT', () => {
    const code = (f: () => unknown): string => {
      try {
        f();
      } catch (err) {
        assert.ok(err instanceof FetchError);
        assert.ok(err.message.length <= 2000);
        return `${err.code}: ${err.message}`;
      }
      return 'no error';
    };
    assert.match(code(() => resolveRedirect('http://[bad', base)), /^MEGURI_ERR_BAD_REDIRECT: unparseable Location/);
    assert.match(code(() => resolveRedirect('ftp://a.test/x', base)), /unsupported scheme ftp:/);
    assert.match(code(() => resolveRedirect('javascript:alert(1)', base)), /unsupported scheme javascript:/);
    const long = '/' + 'a'.repeat(60 * 1024);
    assert.match(code(() => resolveRedirect(long, base)), new RegExp(`redirect target is ${long.length + 'http://a.test'.length} characters, over the ${MAX_URL_LENGTH}-character URL limit`));
    // Percent-encoding can push a target under the limit in characters over it once resolved.
    const wide = '/' + 'é'.repeat(3000);
    assert.match(code(() => resolveRedirect(wide, base)), /over the 8192-character URL limit/);
    assert.equal(MAX_URL_LENGTH, 8192);
    const fits = '/' + 'a'.repeat(MAX_URL_LENGTH - 'http://a.test/'.length);
    assert.equal(resolveRedirect(fits, base).href.length, MAX_URL_LENGTH);
  });

  it('truncates without splitting a surrogate pair', () => {
    assert.equal(truncateText('abc', 5), 'abc');
    assert.equal(truncateText('ab😀', 3), 'ab');
    assert.equal(truncateText('ab😀', 4), 'ab😀');
  });
});

describe('interim 1xx responses', () => {
  const b = (s: string) => Buffer.from(s, 'latin1');
  it('skips a complete 100, 102 or 103 block, with CRLF or bare LF line ends and extra headers', () => {
    assert.deepEqual(scanInterim(b('HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200')), { kind: 'skip', length: 44 });
    assert.deepEqual(scanInterim(b('HTTP/1.1 102\r\n\r\n')), { kind: 'skip', length: 16 });
    assert.deepEqual(scanInterim(b('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n')), { kind: 'skip', length: 25 });
    assert.deepEqual(scanInterim(b('HTTP/1.1 100\r\n\r\n')), { kind: 'skip', length: 16 });
    assert.deepEqual(scanInterim(b('HTTP/1.0 100 Continue\nX: y\n\n')), { kind: 'skip', length: 28 });
    assert.deepEqual(scanInterim(b('HTTP/1.1 100 Continue\r\nServer: x\r\n\r\n')), { kind: 'skip', length: 36 });
  });
  it('waits for more bytes while an interim response is still possible', () => {
    for (const partial of ['H', 'HTTP/1.', 'HTTP/1.1 10', 'HTTP/1.1 100', 'HTTP/1.1 100 Continue\r\n', 'HTTP/1.1 100 Continue\r\n\r']) {
      assert.deepEqual(scanInterim(b(partial)), { kind: 'more' }, JSON.stringify(partial));
    }
  });
  it('passes everything else: final responses, 101 upgrades, HTTP/0.9 bodies, oversized blocks', () => {
    for (const other of ['HTTP/1.1 200 OK\r\n', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', 'HTTP/1.1 1000 x', 'HTTP/1.1 199x', '<html>', 'HTTPS/1.1 100', 'http/1.1 100 Continue\r\n\r\n']) {
      assert.deepEqual(scanInterim(b(other)), { kind: 'pass' }, JSON.stringify(other));
    }
    assert.deepEqual(scanInterim(b('HTTP/1.1 100 Continue\r\nX: ' + 'y'.repeat(20_000))), { kind: 'pass' });
  });
});

describe('protocol error classification', () => {
  it('maps undici parser errors, unrequested responses and upgrades to MEGURI_ERR_PROTOCOL (not retryable)', () => {
    const parser = new undiciErrors.HTTPParserError('Response does not match the HTTP/1.1 protocol (Invalid character in chunk size)');
    assert.equal(classifyError(parser), 'MEGURI_ERR_PROTOCOL');
    assert.equal(classifyError(new undiciErrors.SocketError('bad response')), 'MEGURI_ERR_PROTOCOL');
    assert.match(errorMessage(new undiciErrors.SocketError('bad response')), /unrequested 100 Continue/);
    assert.equal(classifyError(new undiciErrors.SocketError('bad upgrade')), 'MEGURI_ERR_PROTOCOL');
    assert.equal(classifyError(new undiciErrors.SocketError('other side closed')), 'MEGURI_ERR_RESET');
    assert.equal(classifyError(new undiciErrors.ResponseContentLengthMismatchError()), 'MEGURI_ERR_PROTOCOL');
    assert.equal(classifyError(Object.assign(new Error('x'), { code: 'HPE_INVALID_CHUNK_SIZE' })), 'MEGURI_ERR_PROTOCOL');
    assert.equal(isRetryable('MEGURI_ERR_PROTOCOL'), false);
  });
  it('keeps a FetchError passed through undici (the connector refusing an address) as it is', () => {
    const refused = new FetchError('MEGURI_ERR_FORBIDDEN_ADDRESS', '127.0.0.1 is loopback');
    assert.equal(classifyError(refused), 'MEGURI_ERR_FORBIDDEN_ADDRESS');
    assert.equal(classifyError(Object.assign(new Error('wrapped'), { cause: refused })), 'MEGURI_ERR_FORBIDDEN_ADDRESS');
    assert.equal(FETCH_ERRORS.MEGURI_ERR_FORBIDDEN_ADDRESS.retryable, false);
  });
});
