// Conformance suite for the robots.txt engine: RFC 9309 and Google's documented robots.txt
// behaviour. Run: node --import tsx --test test/unit/robots.test.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { robotsCheckCommand } from '../../services/scheduler/robots/cli.ts';
import {
  MAX_LINE_BYTES,
  canonicalize,
  crawlDelay,
  explain,
  forAgent,
  fromJSON,
  isAllowed,
  isValidProductToken,
  parse,
  pathAndQuery,
  productToken,
  rulesForFetchResult,
  toJSON,
} from '../../services/scheduler/robots/index.ts';
import type { RobotsFetchResult, RobotsRules } from '../../services/scheduler/robots/index.ts';
import { GOOGLE_CASES } from '../fixtures/robots/google-cases.ts';

const UA = 'meguri/0.1 (+https://example.org/bot)';

interface MatchCase {
  name: string;
  robots: string | Uint8Array;
  url: string;
  allowed: boolean;
  /** Crawler user agent; default UA above. */
  agent?: string;
  /** Line of the deciding rule, null for "no rule matched"; unchecked when absent. */
  line?: number | null;
  /** Group label of the deciding rule; unchecked when absent. */
  group?: string;
}

function runMatchCases(cases: readonly MatchCase[]): void {
  for (const c of cases) {
    test(c.name, () => {
      const res = isAllowed(parse(c.robots), c.url, c.agent ?? UA);
      assert.equal(res.allowed, c.allowed, `allowed for ${c.url}`);
      if (c.line !== undefined) assert.equal(res.rule === null ? null : res.rule.line, c.line, 'deciding line');
      if (c.group !== undefined) assert.equal(res.rule?.group, c.group, 'group');
    });
  }
}

const star = (...lines: string[]): string => ['User-agent: *', ...lines].join('\n') + '\n';

describe('path matching: prefixes and case (Google: URL matching based on path values)', () => {
  runMatchCases([
    { name: '/ matches the root', robots: star('Disallow: /'), url: '/', allowed: false, line: 2 },
    { name: '/ matches every path', robots: star('Disallow: /'), url: '/any/thing?x=1', allowed: false },
    { name: '/fish matches /fish', robots: star('Disallow: /fish'), url: '/fish', allowed: false },
    { name: '/fish matches /fish.html', robots: star('Disallow: /fish'), url: '/fish.html', allowed: false },
    { name: '/fish matches /fishheads/yummy.html', robots: star('Disallow: /fish'), url: '/fishheads/yummy.html', allowed: false },
    { name: '/fish matches /fish.php?id=anything', robots: star('Disallow: /fish'), url: '/fish.php?id=anything', allowed: false },
    { name: 'paths are case-sensitive: /fish does not match /Fish.asp', robots: star('Disallow: /fish'), url: '/Fish.asp', allowed: true, line: null },
    { name: '/fish does not match /catfish', robots: star('Disallow: /fish'), url: '/catfish', allowed: true },
    { name: '/fish does not match /?id=fish', robots: star('Disallow: /fish'), url: '/?id=fish', allowed: true },
    { name: '/fish/ does not match /fish', robots: star('Disallow: /fish/'), url: '/fish', allowed: true },
    { name: '/fish/ matches /fish/?id=anything', robots: star('Disallow: /fish/'), url: '/fish/?id=anything', allowed: false },
    { name: '/fish/ does not match /animals/fish/', robots: star('Disallow: /fish/'), url: '/animals/fish/', allowed: true },
    { name: 'rules see the query string', robots: star('Disallow: /search?q='), url: '/search?q=shoes', allowed: false },
    { name: 'fragment is ignored', robots: star('Disallow: /a$'), url: 'https://example.com/a#top', allowed: false },
    { name: 'absolute URL: scheme, host and port are dropped', robots: star('Disallow: /x'), url: 'http://example.com:8080/x/y', allowed: false },
    { name: 'absolute URL without a path means /', robots: star('Disallow: /$'), url: 'https://example.com', allowed: false },
  ]);
});

describe('wildcards * and end anchor $ (RFC 9309 §2.2.3)', () => {
  runMatchCases([
    { name: '/fish* behaves like /fish', robots: star('Disallow: /fish*'), url: '/fishheads', allowed: false },
    { name: '/*.php matches /index.php', robots: star('Disallow: /*.php'), url: '/index.php', allowed: false },
    { name: '/*.php matches /folder/filename.php?parameters', robots: star('Disallow: /*.php'), url: '/folder/filename.php?parameters', allowed: false },
    { name: '/*.php matches /folder/any.php.file.html', robots: star('Disallow: /*.php'), url: '/folder/any.php.file.html', allowed: false },
    { name: '/*.php does not match /windows.PHP', robots: star('Disallow: /*.php'), url: '/windows.PHP', allowed: true },
    { name: '/*.php$ matches /folder/filename.php', robots: star('Disallow: /*.php$'), url: '/folder/filename.php', allowed: false },
    { name: '/*.php$ does not match /filename.php?parameters', robots: star('Disallow: /*.php$'), url: '/filename.php?parameters', allowed: true },
    { name: '/*.php$ does not match /filename.php5', robots: star('Disallow: /*.php$'), url: '/filename.php5', allowed: true },
    { name: '/fish*.php matches /fishheads/catfish.php?parameters', robots: star('Disallow: /fish*.php'), url: '/fishheads/catfish.php?parameters', allowed: false },
    { name: '/fish*.php does not match /Fish.PHP', robots: star('Disallow: /fish*.php'), url: '/Fish.PHP', allowed: true },
    { name: 'pattern may start with * (RFC example *.gif$)', robots: star('Disallow: *.gif$'), url: '/img/a.gif', allowed: false },
    { name: '/$ matches only the root', robots: star('Disallow: /$'), url: '/index.html', allowed: true },
    { name: '/$ does not match /?q', robots: star('Disallow: /$'), url: '/?q', allowed: true },
    { name: 'repeated pieces need distinct occurrences', robots: star('Disallow: /*ab*ab$'), url: '/xab', allowed: true },
    { name: 'repeated pieces found in order', robots: star('Disallow: /*ab*ab$'), url: '/xabyab', allowed: false },
    { name: 'anchored tail may not overlap the middle', robots: star('Disallow: /*aba*ba$'), url: '/aba', allowed: true },
    { name: 'consecutive stars act as one', robots: star('Disallow: /a***b'), url: '/a/x/b', allowed: false },
    { name: 'trailing *$ matches anything after the prefix', robots: star('Disallow: /a*$'), url: '/a/b/c', allowed: false },
    { name: '$ not at the end is a literal', robots: star('Disallow: /a$b'), url: '/a$b', allowed: false },
    { name: '$ not at the end does not anchor', robots: star('Disallow: /a$b'), url: '/ab', allowed: true },
    {
      name: 'many wildcards do not backtrack catastrophically',
      robots: star('Disallow: /' + '*a'.repeat(40) + '*b'),
      url: '/' + 'a'.repeat(5000),
      allowed: true,
    },
  ]);
});

describe('precedence: longest match wins, allow wins a tie (RFC 9309 §2.2.2)', () => {
  runMatchCases([
    { name: 'allow /p beats disallow /', robots: star('Allow: /p', 'Disallow: /'), url: '/page', allowed: true, line: 2 },
    { name: 'equal allow and disallow: allow wins', robots: star('Disallow: /folder', 'Allow: /folder'), url: '/folder/page', allowed: true, line: 3 },
    { name: 'disallow /*.htm (6 octets) beats allow /page (5)', robots: star('Allow: /page', 'Disallow: /*.htm'), url: '/page.htm', allowed: false, line: 3 },
    { name: 'allow /page ties disallow /*.ph: allow wins', robots: star('Allow: /page', 'Disallow: /*.ph'), url: '/page.php', allowed: true, line: 2 },
    { name: 'allow /$ keeps the root open', robots: star('Allow: /$', 'Disallow: /'), url: '/', allowed: true, line: 2 },
    { name: 'allow /$ does not open /page.htm', robots: star('Allow: /$', 'Disallow: /'), url: '/page.htm', allowed: false, line: 3 },
    { name: 'order in the file does not matter', robots: star('Disallow: /a/b', 'Allow: /a'), url: '/a/b/c', allowed: false, line: 2 },
    { name: 'longer allow inside a disallowed folder', robots: star('Disallow: /private/', 'Allow: /private/public/'), url: '/private/public/x', allowed: true, line: 3 },
    // "/é" is 2 characters but 7 octets once encoded (/%C3%A9): it outranks the 6-octet "/*abcd".
    { name: 'length counts octets of the normalised pattern', robots: star('Allow: /é', 'Disallow: /*abcd'), url: '/%C3%A9abcd', allowed: true, line: 2 },
    { name: 'same directive and length: first in file is reported', robots: star('Disallow: /a*', 'Disallow: /*a'), url: '/abc', allowed: false, line: 2 },
  ]);
});

describe('user-agent groups (RFC 9309 §2.2.1, Google)', () => {
  const rfcExample = [
    'User-Agent: *',
    'Disallow: *.gif$',
    'Disallow: /example/',
    'Allow: /publications/',
    '',
    'User-Agent: foobot',
    'Disallow:/',
    'Allow:/example/page.html',
    'Allow:/example/allowed.gif',
    '',
    'User-Agent: barbot',
    'User-Agent: bazbot',
    'Disallow: /example/page.html',
    '',
    'User-Agent: quxbot',
    '',
  ].join('\n');
  const googleMerge = [
    'user-agent: googlebot-news',
    'disallow: /fish',
    '',
    'user-agent: *',
    'disallow: /carrots',
    '',
    'user-agent: googlebot-news',
    'disallow: /shrimp',
  ].join('\n');
  runMatchCases([
    { name: 'RFC example: * group applies to unknown bots', robots: rfcExample, agent: 'unknownbot', url: '/example/x', allowed: false, group: '*' },
    { name: 'RFC example: foobot allowed page', robots: rfcExample, agent: 'foobot', url: '/example/page.html', allowed: true, line: 8 },
    { name: 'RFC example: foobot disallowed elsewhere', robots: rfcExample, agent: 'FooBot/2.0', url: '/other', allowed: false, line: 7, group: 'foobot' },
    { name: 'RFC example: foobot does not inherit * rules', robots: rfcExample, agent: 'foobot', url: '/example/allowed.gif', allowed: true },
    { name: 'RFC example: consecutive user-agent lines share a group (barbot)', robots: rfcExample, agent: 'barbot', url: '/example/page.html', allowed: false },
    { name: 'RFC example: consecutive user-agent lines share a group (bazbot)', robots: rfcExample, agent: 'bazbot', url: '/example/page.html', allowed: false },
    { name: 'RFC example: a group without rules allows everything (quxbot)', robots: rfcExample, agent: 'quxbot', url: '/example/x', allowed: true, line: null },
    { name: 'Google: same-agent groups are merged (first group)', robots: googleMerge, agent: 'googlebot-news', url: '/fish', allowed: false, line: 2 },
    { name: 'Google: same-agent groups are merged (second group)', robots: googleMerge, agent: 'googlebot-news', url: '/shrimp', allowed: false, line: 8 },
    { name: 'Google: merged specific group ignores *', robots: googleMerge, agent: 'googlebot-news', url: '/carrots', allowed: true },
    { name: 'Google: other agents use *', robots: googleMerge, agent: 'otherbot', url: '/carrots', allowed: false, group: '*' },
    {
      name: 'RFC: ExampleBot groups merged',
      robots: 'user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n',
      agent: 'examplebot',
      url: '/baz/1',
      allowed: false,
    },
    { name: 'group user-agent matched case-insensitively', robots: 'User-agent: MEGURI\nDisallow: /x\n', url: '/x', allowed: false, group: 'meguri' },
    { name: 'version in the group line is ignored', robots: 'User-agent: Meguri/1.0\nDisallow: /x\n', url: '/x', allowed: false },
    { name: 'text after a space in the group line is ignored', robots: 'User-agent: meguri bot\nDisallow: /x\n', url: '/x', allowed: false },
    { name: 'product token from the full UA string', robots: 'User-agent: meguri\nDisallow: /x\n', agent: 'Meguri/0.1 (+https://example.org/bot)', url: '/x', allowed: false },
    { name: 'specific group beats *', robots: 'User-agent: *\nDisallow: /a\n\nUser-agent: meguri\nDisallow: /b\n', url: '/a', allowed: true },
    { name: 'fallback to * when no group names the agent', robots: 'User-agent: otherbot\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n', url: '/b', allowed: false, group: '*' },
    { name: 'no matching group and no *: everything allowed', robots: 'User-agent: otherbot\nDisallow: /\n', url: '/a', allowed: true, line: null },
    { name: 'token match is exact: meguri-news does not use the meguri group', robots: 'User-agent: meguri\nDisallow: /a\nUser-agent: *\nDisallow: /b\n', agent: 'meguri-news/1.0', url: '/a', allowed: true },
    { name: 'a group line is read up to its first non-letter: meguri2 names meguri (Google)', robots: 'User-agent: meguri2\nDisallow: /a\n', url: '/a', allowed: false },
    { name: 'a group line starting with a digit names nobody', robots: 'User-agent: 360Spider\nDisallow: /a\n', url: '/a', allowed: true },
    { name: 'an agent with two words is no product token: only * applies', robots: 'User-agent: meguri\nDisallow: /a\nUser-agent: *\nDisallow: /b\n', agent: 'meguri bot', url: '/b', allowed: false, group: '*' },
    { name: 'an agent with a comment after its token keeps the token', robots: 'User-agent: meguri\nDisallow: /a\n', agent: 'meguri (+https://example.org/bot)', url: '/a', allowed: false, group: 'meguri' },
    { name: '"* trailing text" is still the global group (Google)', robots: 'User-agent: * everyone\nDisallow: /a\n', url: '/a', allowed: false },
    { name: 'user-agent: *bot is not the global group', robots: 'User-agent: *bot\nDisallow: /a\n', url: '/a', allowed: true },
    { name: 'a user-agent line after rules starts a new group', robots: 'User-agent: meguri\nDisallow: /a\nUser-agent: other\nDisallow: /b\n', url: '/b', allowed: true },
    { name: 'blank lines and comments between user-agent lines keep one group', robots: 'User-agent: other\n\n# note\nUser-agent: meguri\nDisallow: /a\n', url: '/a', allowed: false },
    { name: 'a sitemap line between user-agent lines keeps one group', robots: 'User-agent: meguri\nSitemap: https://e.com/s.xml\nUser-agent: other\nDisallow: /a\n', url: '/a', allowed: false },
    { name: 'an unknown field between user-agent lines keeps one group', robots: 'User-agent: meguri\nNoindex: /x\nUser-agent: other\nDisallow: /a\n', url: '/a', allowed: false },
    { name: 'crawl-delay closes the user-agent list', robots: 'User-agent: meguri\nCrawl-delay: 5\nUser-agent: other\nDisallow: /a\n', url: '/a', allowed: true },
    { name: 'rules before any user-agent line are ignored', robots: 'Disallow: /a\nUser-agent: *\nDisallow: /b\n', url: '/a', allowed: true },
    { name: 'agent "*" uses the global group', robots: 'User-agent: meguri\nDisallow: /a\nUser-agent: *\nDisallow: /b\n', agent: '*', url: '/b', allowed: false },
  ]);
});

describe('syntax (RFC 9309 §2.2, Google leniencies)', () => {
  runMatchCases([
    { name: 'field names are case-insensitive', robots: 'USER-AGENT: *\nDISALLOW: /a\n', url: '/a', allowed: false },
    { name: 'mixed-case directive', robots: 'uSeR-aGeNt: *\ndisAllow: /a\nALLOW: /a/b\n', url: '/a/b', allowed: true },
    { name: 'empty disallow allows everything', robots: star('Disallow:'), url: '/anything', allowed: true, line: null },
    { name: 'empty disallow next to a real rule', robots: star('Disallow:', 'Disallow: /x'), url: '/x', allowed: false, line: 3 },
    { name: 'empty allow is ignored', robots: star('Allow:', 'Disallow: /'), url: '/a', allowed: false },
    { name: 'comment after a rule', robots: star('Disallow: /a # keep out'), url: '/a', allowed: false },
    { name: 'comment does not become part of the pattern', robots: star('Disallow: /a# keep out'), url: '/a', allowed: false },
    { name: 'whitespace around the colon', robots: 'User-agent :  *\nDisallow  :   /a   \n', url: '/a', allowed: false },
    { name: 'tabs as whitespace', robots: 'User-agent:\t*\nDisallow:\t/a\n', url: '/a', allowed: false },
    { name: 'missing colon tolerated (Google)', robots: 'User-agent *\nDisallow /a\n', url: '/a', allowed: false },
    { name: 'misspelt disallow tolerated (Google)', robots: star('Dissallow: /a'), url: '/a', allowed: false },
    { name: 'keys are recognised by their start: disallowed (Google)', robots: star('Disallowed: /a'), url: '/a', allowed: false },
    { name: 'keys are recognised by their start: allowed (Google)', robots: star('Disallow: /', 'Allowed: /a'), url: '/a', allowed: true },
    { name: 'keys are recognised by their start: user-agents (Google)', robots: 'User-agents: meguri\nDisallow: /a\n', url: '/a', allowed: false, group: 'meguri' },
    { name: 'a key is not recognised by its end', robots: star('No-disallow: /a'), url: '/a', allowed: true },
    { name: 'junk lines are skipped', robots: '<html>\nUser-agent: *\nthis is not a rule at all\n}{][\nDisallow: /a\n</html>\n', url: '/a', allowed: false },
    { name: 'junk does not split a group', robots: 'User-agent: meguri\n@@@ junk @@@\nUser-agent: x\nDisallow: /a\n', url: '/a', allowed: false },
    { name: 'pattern not starting with / or * is ignored', robots: star('Disallow: a'), url: '/a', allowed: true },
    { name: 'CRLF line endings', robots: 'User-agent: *\r\nDisallow: /a\r\nAllow: /a/b\r\n', url: '/a/b', allowed: true, line: 3 },
    { name: 'CR-only line endings', robots: 'User-agent: *\rDisallow: /a\rAllow: /a/b\r', url: '/a/c', allowed: false, line: 2 },
    { name: 'mixed line endings count lines correctly', robots: 'User-agent: *\r\n\rDisallow: /a\n', url: '/a', allowed: false, line: 3 },
    { name: 'no trailing newline', robots: 'User-agent: *\nDisallow: /a', url: '/a', allowed: false },
    { name: 'UTF-8 BOM in a string body', robots: '\uFEFFUser-agent: *\nDisallow: /a\n', url: '/a', allowed: false },
    {
      name: 'UTF-8 BOM in a byte body',
      robots: new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('User-agent: *\nDisallow: /a\n')]),
      url: '/a',
      allowed: false,
    },
    { name: 'empty file allows everything', robots: '', url: '/a', allowed: true },
  ]);
});

describe('percent-encoding equivalence (RFC 9309 §2.2.2 and §2.2.3)', () => {
  runMatchCases([
    { name: 'RFC: /foo/bar?baz=quz', robots: star('Disallow: /foo/bar?baz=quz'), url: '/foo/bar?baz=quz', allowed: false },
    { name: 'RFC: plain query data matches its encoded form', robots: star('Disallow: /foo/bar?baz=https://foo.bar'), url: '/foo/bar?baz=https%3A%2F%2Ffoo.bar', allowed: false },
    { name: 'RFC: encoded query data matches its plain form', robots: star('Disallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar'), url: '/foo/bar?baz=https://foo.bar', allowed: false },
    { name: 'RFC: non-ASCII rule matches its UTF-8 encoding', robots: star('Disallow: /foo/bar/ツ'), url: '/foo/bar/%E3%83%84', allowed: false },
    { name: 'encoded rule matches the same encoded URL', robots: star('Disallow: /foo/bar/%E3%83%84'), url: '/foo/bar/%E3%83%84', allowed: false },
    { name: 'a URL is taken as sent: raw non-ASCII matches no encoded rule (Google)', robots: star('Disallow: /foo/bar/%E3%83%84'), url: '/foo/bar/ツ', allowed: true },
    { name: 'a raw non-ASCII URL still matches a shorter ASCII prefix', robots: star('Disallow: /foo/'), url: '/foo/ツ', allowed: false },
    { name: 'encoded unreserved octets are not decoded in a rule (Google)', robots: star('Disallow: /foo/bar/%62%61%7A'), url: '/foo/bar/baz', allowed: true },
    { name: 'encoded unreserved octets in a rule match the same octets', robots: star('Disallow: /foo/bar/%62%61%7A'), url: '/foo/bar/%62%61%7a', allowed: false },
    { name: 'encoded unreserved octets are not decoded in the URL', robots: star('Disallow: /~user/'), url: '/%7Euser/notes', allowed: true },
    { name: 'hex case is normalised (URL lower, rule upper)', robots: star('Disallow: /%C3%A9'), url: '/%c3%a9', allowed: false },
    { name: 'hex case is normalised (rule lower, URL upper)', robots: star('Disallow: /%c3%a9'), url: '/%C3%A9', allowed: false },
    { name: 'a raw UTF-8 rule matches the encoded URL', robots: star('Disallow: /é'), url: '/%C3%A9', allowed: false },
    { name: 'a raw UTF-8 rule matches a lower-case encoded URL', robots: star('Disallow: /é'), url: '/%c3%a9/x', allowed: false },
    { name: 'reserved escapes stay encoded: %2F in a rule is no slash', robots: star('Disallow: /a%2Fb'), url: '/a/b', allowed: true },
    { name: 'encoded slash in a path is not a slash', robots: star('Disallow: /a/b'), url: '/a%2Fb', allowed: true },
    { name: 'encoded slash matches encoded slash', robots: star('Disallow: /a%2Fb'), url: '/a%2fb', allowed: false },
    { name: 'RFC: %2A in a rule is a literal *', robots: star('Disallow: /path/file-with-a-%2A.html'), url: '/path/file-with-a-*.html', allowed: false },
    { name: '%2A in a rule is not a wildcard', robots: star('Disallow: /path/file-with-a-%2A.html'), url: '/path/file-with-a-x.html', allowed: true },
    { name: 'RFC: %24 in a rule is a literal $', robots: star('Disallow: /path/foo-%24'), url: '/path/foo-$', allowed: false },
    { name: 'space in a rule matches %20', robots: star('Disallow: /a b'), url: '/a%20b', allowed: false },
    { name: 'non-ASCII path in an absolute URL', robots: star('Disallow: /café'), url: 'https://example.com/caf%C3%A9/menu', allowed: false },
    { name: 'astral-plane characters are UTF-8 encoded', robots: star('Disallow: /😀'), url: '/%F0%9F%98%80', allowed: false },
    { name: 'encoded unreserved in the query is not decoded', robots: star('Disallow: /s?q=A'), url: '/s?q=%41', allowed: true },
    { name: 'encoded & in the query is not a separator', robots: star('Disallow: /s?a=1&b'), url: '/s?a=1%26b', allowed: true },
    { name: 'encoded ? in the path does not start a query', robots: star('Disallow: /a?b'), url: '/a%3Fb', allowed: true },
  ]);
});

describe('an allowed index page allows its directory (Google)', () => {
  runMatchCases([
    { name: 'Allow /d/index.html allows /d/', robots: star('Allow: /d/index.html', 'Disallow: /'), url: '/d/', allowed: true, line: 2 },
    { name: 'Allow /d/index.htm allows /d/', robots: star('Allow: /d/index.htm', 'Disallow: /'), url: '/d/', allowed: true, line: 2 },
    { name: 'Allow /d/index.html$ allows /d/', robots: star('Allow: /d/index.html$', 'Disallow: /'), url: '/d/', allowed: true },
    { name: 'only the directory itself, not what is below it', robots: star('Allow: /d/index.html', 'Disallow: /'), url: '/d/other', allowed: false },
    { name: 'not the directory with a query', robots: star('Allow: /d/index.html', 'Disallow: /'), url: '/d/?x=1', allowed: false },
    { name: 'not index.htm when index.html is allowed', robots: star('Allow: /d/index.html', 'Disallow: /'), url: '/d/index.htm', allowed: false },
    { name: 'the root index page allows /', robots: star('Allow: /index.html', 'Disallow: /'), url: '/', allowed: true },
    { name: 'a wildcard directory', robots: star('Allow: /*/index.html', 'Disallow: /'), url: '/any/', allowed: true },
    { name: 'only the last segment counts', robots: star('Allow: /index.html/d', 'Disallow: /'), url: '/', allowed: false },
    { name: 'other names are not index pages', robots: star('Allow: /d/default.html', 'Disallow: /'), url: '/d/', allowed: false },
    { name: 'a disallowed index page does not disallow its directory', robots: star('Disallow: /d/index.html'), url: '/d/', allowed: true, line: null },
    // The directory rule ranks as `/d/$` (4 octets): it beats `/d/` (3), ties `/d/$` (allow wins),
    // and loses to anything longer.
    { name: 'directory rule beats a shorter disallow', robots: star('Allow: /d/index.html', 'Disallow: /d/'), url: '/d/', allowed: true },
    { name: 'directory rule ties /d/$: allow wins', robots: star('Allow: /d/index.html', 'Disallow: /d/$'), url: '/d/', allowed: true },
    { name: 'directory rule loses to a longer disallow', robots: star('Allow: /d/index.html', 'Disallow: /d/*$'), url: '/d/', allowed: false, line: 3 },
  ]);
  test('explain names the index rule as written', () => {
    assert.deepEqual(explain(parse(star('Allow: /d/index.html', 'Disallow: /')), UA, ['/d/']), [
      { url: '/d/', allowed: true, rule: 'Allow: /d/index.html (line 2)' },
    ]);
  });
});

describe('over-long lines are cut at 16,663 bytes (Google)', () => {
  const rule = (path: string): string => `Disallow: ${path}`;
  const fill = (prefix: string, bytes: number): string => prefix + 'a'.repeat(bytes - prefix.length);
  test('the figure', () => assert.equal(MAX_LINE_BYTES, 2083 * 8 - 1));
  test('a line of exactly the limit is kept whole', () => {
    const path = fill('/x/', MAX_LINE_BYTES - 'Disallow: '.length);
    const rules = parse(star(rule(path)));
    assert.equal(rules.groups[0]?.rules[0]?.pattern, path);
    assert.equal(isAllowed(rules, path, UA).allowed, false);
  });
  test('one byte more is cut off, and the cut rule is the rule', () => {
    const path = fill('/x/', MAX_LINE_BYTES - 'Disallow: '.length) + 'b';
    const rules = parse(star(rule(path)));
    assert.equal(rules.groups[0]?.rules[0]?.pattern, path.slice(0, -1));
    assert.equal(isAllowed(rules, path.slice(0, -1) + 'c', UA).allowed, false);
  });
  test('the limit counts UTF-8 bytes and never splits a character', () => {
    // 2 bytes short of the limit, then a 3-byte character: it does not fit and is dropped whole.
    const path = fill('/x/', MAX_LINE_BYTES - 'Disallow: '.length - 2) + 'ツ';
    const got = parse(star(rule(path))).groups[0]?.rules[0]?.pattern;
    assert.equal(got, path.slice(0, -1));
    const astral = fill('/x/', MAX_LINE_BYTES - 'Disallow: '.length - 3) + '😀';
    assert.equal(parse(star(rule(astral))).groups[0]?.rules[0]?.pattern, astral.slice(0, -2));
  });
  test('a comment past the cut does not matter, and the next line is read', () => {
    const path = fill('/x/', MAX_LINE_BYTES);
    const rules = parse(star(`${rule(path)}# ${'c'.repeat(100)}`, 'Disallow: /next'));
    assert.equal(rules.groups[0]?.rules.length, 2);
    assert.equal(rules.groups[0]?.rules[1]?.line, 3);
    assert.equal(isAllowed(rules, '/next', UA).allowed, false);
  });
});

describe("Google's robots.txt verdicts (google/robotstxt unit tests)", () => {
  test('all 141 verdicts are here', () => assert.equal(GOOGLE_CASES.length, 141));
  for (const [i, c] of GOOGLE_CASES.entries()) {
    const url = c.url.length > 60 ? `${c.url.slice(0, 40)}…(${c.url.length} chars)` : c.url;
    test(`#${i + 1} ${c.topic}: ${JSON.stringify(c.agent)} ${url === '' ? '(empty URL)' : url} → ${c.allowed ? 'allowed' : 'blocked'}`, () => {
      assert.equal(isAllowed(parse(c.robots), c.url, c.agent).allowed, c.allowed);
    });
  }
  test('robots check gives the same 141 verdicts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'robots-google-'));
    try {
      let passed = 0;
      const failed: string[] = [];
      for (const [i, c] of GOOGLE_CASES.entries()) {
        const file = join(dir, `${i}.txt`);
        writeFileSync(file, c.robots);
        const out: string[] = [];
        const code = robotsCheckCommand({ robotsFile: file, agent: c.agent, json: true, urls: [c.url] }, (l) => out.push(l), () => {});
        const [verdict] = JSON.parse(out.join('')) as { allowed: boolean }[];
        if (code === (c.allowed ? 0 : 1) && verdict?.allowed === c.allowed) passed++;
        else failed.push(`#${i + 1} ${c.topic}`);
      }
      assert.deepEqual(failed, []);
      assert.equal(passed, 141);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  test('valid product tokens to obey', () => {
    for (const name of ['Foobot', 'Foobot-Bar', 'Foo_Bar']) assert.equal(isValidProductToken(name), true, name);
    for (const name of ['', 'ツ', 'Foobot*', ' Foobot ', 'Foobot/2.1', 'Foobot Bar']) assert.equal(isValidProductToken(name), false, name);
  });
  test('line numbers with LF, CRLF, CR, mixed endings and no final newline', () => {
    const body = ['User-Agent: foo', 'Allow: /some/path', 'User-Agent: bar', '', '', 'Disallow: /'];
    const variants = {
      unix: body.join('\n') + '\n',
      dos: body.join('\r\n') + '\r\n',
      mac: body.join('\r') + '\r',
      noFinalNewline: body.join('\n'),
      mixed: 'User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /',
    };
    for (const [name, text] of Object.entries(variants)) {
      const rules = parse(text);
      const found = rules.groups.map((g) => [g.agents, g.line, g.rules.map((r) => r.line)]);
      assert.deepEqual(found, [[['foo'], 1, [2]], [['bar'], 3, [6]]], name);
    }
  });
  test('a byte order mark, whole or partial, is skipped only at the start', () => {
    const rest = new TextEncoder().encode('User-Agent: foo\nAllow: /AnyValue\n');
    const body = (...prefix: number[]): Uint8Array => new Uint8Array([...prefix, ...rest]);
    for (const bom of [[0xef, 0xbb, 0xbf], [0xef, 0xbb], [0xef]]) {
      const rules = parse(body(...bom));
      assert.deepEqual(rules.groups.map((g) => [g.agents, g.rules.length]), [[['foo'], 1]], bom.join(' '));
    }
    // A broken mark leaves garbage in front of the first key: that line is not a user-agent line.
    assert.deepEqual(parse(body(0xef, 0x11, 0xbf)).groups, []);
    // A mark in the middle of the file spoils the line it starts.
    const middle = new Uint8Array([...new TextEncoder().encode('User-Agent: foo\n'), 0xef, 0xbb, 0xbf, ...new TextEncoder().encode('Allow: /AnyValue\n')]);
    assert.deepEqual(parse(middle).groups.map((g) => [g.agents, g.rules.length]), [[['foo'], 0]]);
  });
  test('a sitemap line is read anywhere in the file', () => {
    const loc = 'http://foo.bar/sitemap.xml';
    const groups = 'User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\n';
    assert.deepEqual(parse(`${groups}Sitemap: ${loc}\n`).sitemaps, [loc]);
    assert.deepEqual(parse(`Sitemap: ${loc}\n${groups}`).sitemaps, [loc]);
    assert.deepEqual(parse(`Sitemaps: ${loc}\nSite-map: ${loc}2\n`).sitemaps, [loc, `${loc}2`]);
  });
});

describe('/robots.txt is always allowed (RFC 9309 §2.2.2)', () => {
  runMatchCases([
    { name: '/robots.txt under Disallow: /', robots: star('Disallow: /'), url: '/robots.txt', allowed: true, line: null },
    { name: 'absolute /robots.txt URL', robots: star('Disallow: /robots.txt'), url: 'https://example.com/robots.txt', allowed: true },
    { name: '/robots.txt with a query', robots: star('Disallow: /'), url: '/robots.txt?v=2', allowed: true },
    { name: '/robots.txt.bak is an ordinary path', robots: star('Disallow: /'), url: '/robots.txt.bak', allowed: false },
  ]);
});

describe('parse results', () => {
  test('crawl-delay: integer, fractional, invalid, per group', () => {
    const cases: [string, string, number | undefined][] = [
      ['User-agent: *\nCrawl-delay: 10\n', UA, 10],
      ['User-agent: *\nCrawl-delay: 2.5\n', UA, 2.5],
      ['User-agent: *\nCrawl-delay: .5\n', UA, 0.5],
      ['User-agent: *\nCrawl-delay: abc\n', UA, undefined],
      ['User-agent: *\nCrawl-delay: -1\n', UA, undefined],
      ['User-agent: *\ncrawl-delay: 1\nUser-agent: meguri\nCRAWL-DELAY: 4\n', UA, 4],
      ['User-agent: *\ncrawl-delay: 1\nUser-agent: meguri\nCRAWL-DELAY: 4\n', 'otherbot', 1],
      ['User-agent: meguri\ncrawl-delay: 1\n\nUser-agent: meguri\ncrawl-delay: 3\n', UA, 3],
    ];
    for (const [body, agent, want] of cases) assert.equal(crawlDelay(parse(body), agent), want, JSON.stringify(body));
  });

  test('sitemaps: all kept, any position, in order, without breaking groups', () => {
    const body = [
      'Sitemap: https://e.com/a.xml',
      'User-agent: meguri',
      'SITEMAP: https://e.com/b.xml',
      'User-agent: other',
      'Disallow: /x',
      'site-map: https://e.com/c.xml',
      'Sitemap: https://e.com/a.xml',
    ].join('\n');
    const rules = parse(body);
    assert.deepEqual(rules.sitemaps, ['https://e.com/a.xml', 'https://e.com/b.xml', 'https://e.com/c.xml', 'https://e.com/a.xml']);
    assert.equal(isAllowed(rules, '/x', UA).allowed, false);
  });

  test('groups record their agents, first line and rules', () => {
    const rules = parse('User-agent: A\nUser-agent: b/1.0\nUser-agent: a\nDisallow: /x\nAllow: /x/y\n');
    assert.deepEqual(rules.groups, [
      {
        agents: ['a', 'b'],
        line: 1,
        rules: [
          { directive: 'disallow', pattern: '/x', line: 4 },
          { directive: 'allow', pattern: '/x/y', line: 5 },
        ],
      },
    ]);
  });

  test('product tokens', () => {
    const cases: [string, string][] = [
      ['meguri/0.1 (+https://example.org/bot)', 'meguri'],
      ['Meguri', 'meguri'],
      ['  meguri-news/2', 'meguri-news'],
      ['meguri (+https://example.org/bot)', 'meguri'],
      ['Mozilla/5.0 (compatible; meguri/0.1)', 'mozilla'],
      // No product token: only the * group applies to these.
      ['meguri bot', ''],
      ['meguri*', ''],
      ['360Spider/1.0', ''],
      ['ツ', ''],
      ['', ''],
      ['/x', ''],
    ];
    for (const [ua, want] of cases) assert.equal(productToken(ua), want, ua);
  });

  test('path extraction', () => {
    const cases: [string, string][] = [
      ['https://example.com', '/'],
      ['https://example.com?x=1', '/?x=1'],
      ['https://example.com:8443/a/b?c=d#e', '/a/b?c=d'],
      ['//example.com/a', '/a'],
      ['/a?b#c', '/a?b'],
      ['', '/'],
      // Without a scheme, the text before the first / ? or ; is the authority (as Google reads it).
      ['https://www.example.com/', '/'],
      ['http://www.example.com/a/', '/a/'],
      ['http://www.example.com/a/b?c=http://d.e/', '/a/b?c=http://d.e/'],
      ['http://www.example.com/a/b?c=d&e=f#fragment', '/a/b?c=d&e=f'],
      ['example.com', '/'],
      ['example.com/', '/'],
      ['example.com/a/', '/a/'],
      ['example.com/a/b?c=d&e=f#fragment', '/a/b?c=d&e=f'],
      ['a', '/'],
      ['a/', '/'],
      ['a/b', '/b'],
      ['example.com?a', '/?a'],
      ['example.com/a;b#c', '/a;b'],
      ['//a/b/c', '/b/c'],
      ['example.com#x/y', '/'],
      ['/a?u=http://b/c', '/a?u=http://b/c'],
      ['a?u=http://b/c', '/?u=http://b/c'],
    ];
    for (const [url, want] of cases) assert.equal(pathAndQuery(url), want, url);
  });

  test('canonical form', () => {
    const cases: [string, string][] = [
      ['/plain/path?q=1', '/plain/path?q=1'],
      ['/%7e%41%2d%2e%5f', '/%7E%41%2D%2E%5F'],
      ['/a%2fb', '/a%2Fb'],
      ['/ツ', '/ツ'],
      ['/a*b$', '/a%2Ab%24'],
      ['/100%', '/100%25'],
      ['/a b"<>', '/a%20b%22%3C%3E'],
      ['/p%3A?u=http%3A%2F%2Fx%40y', '/p%3A?u=http://x@y'],
    ];
    for (const [input, want] of cases) assert.equal(canonicalize(input, false), want, input);
    const patterns: [string, string][] = [
      ['/a*b', '/a*b'],
      ['http://www.example.com', 'http://www.example.com'],
      ['/a/b/c', '/a/b/c'],
      ['á', '%C3%A1'],
      ['%aa', '%AA'],
      ['/ツ', '/%E3%83%84'],
      ['/SanJoséSellers', '/SanJos%C3%A9Sellers'],
      ['/\uD800x', '/%EF%BF%BDx'],
    ];
    for (const [input, want] of patterns) assert.equal(canonicalize(input, true), want, `pattern ${input}`);
  });
});

describe('size limit: only the first 500 KiB are parsed (RFC 9309 §2.5)', () => {
  const filler = ('# ' + 'x'.repeat(98) + '\n').repeat(5200); // 520,000 bytes
  const body = 'User-agent: *\nDisallow: /early\n' + filler + 'Disallow: /late\n';

  test('rules before the limit apply', () => {
    assert.equal(isAllowed(parse(body), '/early').allowed, false);
  });
  test('rules after the limit are ignored', () => {
    const rules = parse(body);
    assert.equal(isAllowed(rules, '/late').allowed, true);
    assert.equal(rules.truncated, true);
    assert.ok(rules.parsedBytes <= 512_000);
  });
  test('a byte body is limited the same way', () => {
    const rules = parse(new TextEncoder().encode(body));
    assert.equal(isAllowed(rules, '/late').allowed, true);
    assert.equal(isAllowed(rules, '/early').allowed, false);
  });
  test('a line cut by the limit is dropped, not shortened', () => {
    const head = 'User-agent: *\nDisallow: /\n';
    const cut = head + 'Allow: /public/page';
    const rules = parse(cut, { maxBytes: head.length + 'Allow: /p'.length });
    assert.equal(isAllowed(rules, '/private').allowed, false);
    assert.equal(rules.truncated, true);
  });
  test('a file exactly at the limit is complete', () => {
    const exact = 'User-agent: *\nDisallow: /a\n';
    const rules = parse(exact, { maxBytes: exact.length });
    assert.equal(rules.truncated, false);
    assert.equal(isAllowed(rules, '/a').allowed, false);
  });
});

describe('fetch status policy (RFC 9309 §2.3.1, §2.4)', () => {
  const now = Date.UTC(2026, 0, 1);
  const MIN = 60_000;
  const HOUR = 60 * MIN;
  const DAY = 24 * HOUR;
  const body = 'User-agent: *\nDisallow: /private\n';
  const cached = parse('User-agent: *\nDisallow: /old\n');

  interface PolicyCase {
    name: string;
    input: Omit<RobotsFetchResult, 'nowMs'>;
    outcome: string;
    /** Expected verdict for /private and /public. */
    privateAllowed: boolean;
    publicAllowed: boolean;
    recheckAfterMs?: number;
    cacheForMs?: number;
    unreachableSinceMs?: number | null;
  }
  const cases: PolicyCase[] = [
    { name: '200: parsed', input: { status: 200, body }, outcome: 'parsed', privateAllowed: false, publicAllowed: true, recheckAfterMs: 6 * HOUR, cacheForMs: DAY, unreachableSinceMs: null },
    { name: '200 with bytes: parsed', input: { status: 200, body: new TextEncoder().encode(body) }, outcome: 'parsed', privateAllowed: false, publicAllowed: true },
    { name: '204 empty body: everything allowed', input: { status: 204 }, outcome: 'parsed', privateAllowed: true, publicAllowed: true },
    { name: '200 after 5 redirects: parsed', input: { status: 200, body, redirects: 5 }, outcome: 'parsed', privateAllowed: false, publicAllowed: true },
    { name: 'more than 5 redirects: unavailable', input: { status: 200, body, redirects: 6 }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true },
    { name: 'final 301 (redirect limit hit): unavailable', input: { status: 301, redirects: 5 }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true },
    { name: '400: unavailable', input: { status: 400 }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true },
    { name: '401: unavailable', input: { status: 401 }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true },
    { name: '403: unavailable', input: { status: 403 }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true },
    { name: '404: unavailable, rechecked in 6 h', input: { status: 404 }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true, recheckAfterMs: 6 * HOUR, cacheForMs: DAY },
    { name: '410: unavailable', input: { status: 410 }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true },
    { name: '429 is treated as a server error (Google)', input: { status: 429 }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false },
    { name: '500: complete disallow, retry in 1 min', input: { status: 500 }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false, recheckAfterMs: MIN, cacheForMs: MIN, unreachableSinceMs: now },
    { name: '503: complete disallow', input: { status: 503 }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false },
    { name: 'network error: complete disallow', input: { error: new Error('ECONNRESET') }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false },
    { name: 'error wins over a 200 status (truncated body)', input: { status: 200, body, error: 'body cut short' }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false },
    { name: 'no response at all: complete disallow', input: {}, outcome: 'unreachable', privateAllowed: false, publicAllowed: false },
    { name: 'unreachable 10 min: retry after 10 min', input: { status: 502, unreachableSinceMs: now - 10 * MIN }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false, recheckAfterMs: 10 * MIN, unreachableSinceMs: now - 10 * MIN },
    { name: 'unreachable 3 days: retry capped at 6 h', input: { status: 500, unreachableSinceMs: now - 3 * DAY }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false, recheckAfterMs: 6 * HOUR },
    { name: 'unreachable 29 days: still complete disallow', input: { status: 500, unreachableSinceMs: now - 29 * DAY, cached }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false },
    { name: 'unreachable 30 days, no cached copy: no restrictions', input: { status: 500, unreachableSinceMs: now - 30 * DAY }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true, unreachableSinceMs: now - 30 * DAY },
    { name: 'unreachable 30 days with a cached copy: cached rules', input: { error: 'timeout', unreachableSinceMs: now - 31 * DAY, cached }, outcome: 'cached', privateAllowed: true, publicAllowed: true, recheckAfterMs: 6 * HOUR },
    { name: 'opt-in: cached copy while unreachable', input: { status: 500, cached, policy: { useCacheWhileUnreachable: true } }, outcome: 'cached', privateAllowed: true, publicAllowed: true },
    { name: 'custom retry parameters', input: { status: 500, policy: { retryInitialMs: 5 * MIN } }, outcome: 'unreachable', privateAllowed: false, publicAllowed: false, recheckAfterMs: 5 * MIN },
    { name: 'custom recheck interval', input: { status: 200, body, policy: { recheckAfterMs: HOUR } }, outcome: 'parsed', privateAllowed: false, publicAllowed: true, recheckAfterMs: HOUR },
    { name: 'recheck never exceeds the 24 h cache limit', input: { status: 404, policy: { recheckAfterMs: 3 * DAY } }, outcome: 'unavailable', privateAllowed: true, publicAllowed: true, recheckAfterMs: DAY },
  ];

  for (const c of cases) {
    test(c.name, () => {
      const d = rulesForFetchResult({ ...c.input, nowMs: now });
      assert.equal(d.outcome, c.outcome);
      assert.equal(isAllowed(d.rules, '/private', UA).allowed, c.privateAllowed, '/private');
      assert.equal(isAllowed(d.rules, '/public', UA).allowed, c.publicAllowed, '/public');
      assert.equal(isAllowed(d.rules, '/robots.txt', UA).allowed, true, '/robots.txt stays fetchable');
      if (c.recheckAfterMs !== undefined) assert.equal(d.recheckAfterMs, c.recheckAfterMs, 'recheckAfterMs');
      if (c.cacheForMs !== undefined) assert.equal(d.cacheForMs, c.cacheForMs, 'cacheForMs');
      if (c.unreachableSinceMs !== undefined) assert.equal(d.unreachableSinceMs, c.unreachableSinceMs, 'unreachableSinceMs');
      assert.ok(d.reason.length > 0);
    });
  }

  test('retries back off roughly exponentially while unreachable', () => {
    let t = now;
    let since: number | null = null;
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const d = rulesForFetchResult({ status: 503, unreachableSinceMs: since, nowMs: t });
      waits.push(d.recheckAfterMs);
      since = d.unreachableSinceMs;
      t += d.recheckAfterMs;
    }
    assert.deepEqual(waits.slice(0, 5), [MIN, MIN, 2 * MIN, 4 * MIN, 8 * MIN]);
    assert.equal(waits[waits.length - 1], 6 * HOUR);
  });

  test('a success after an outage clears unreachableSinceMs', () => {
    const d = rulesForFetchResult({ status: 200, body, unreachableSinceMs: now - DAY, nowMs: now });
    assert.equal(d.unreachableSinceMs, null);
  });
});

describe('storage', () => {
  const body = [
    'User-agent: *',
    'Disallow: /private*',
    'Allow: /private/ok$',
    'Crawl-delay: 1.5',
    'Sitemap: https://e.com/s.xml',
    'User-agent: meguri',
    'Disallow: /m',
  ].join('\n');
  const urls = ['/private/x', '/private/ok', '/m', '/n', '/robots.txt'];
  const verdicts = (rules: RobotsRules, agent: string): boolean[] => urls.map((u) => isAllowed(rules, u, agent).allowed);

  test('round trip keeps every decision and field', () => {
    const rules = parse(body, { agent: UA });
    const restored = fromJSON(toJSON(rules));
    assert.deepEqual(restored, rules);
    for (const agent of [UA, 'otherbot']) assert.deepEqual(verdicts(restored, agent), verdicts(rules, agent));
    assert.equal(crawlDelay(restored, 'otherbot'), 1.5);
  });
  test('stored form is compact', () => {
    const s = toJSON(parse(body));
    assert.ok(s.length < body.length * 1.5, `${s.length} chars for a ${body.length}-char file`);
  });
  test('raw body is optional', () => {
    const withRaw = parse(body, { keepRaw: true });
    assert.equal(fromJSON(toJSON(withRaw)).raw, body);
    assert.equal(fromJSON(toJSON(withRaw, { keepRaw: false })).raw, undefined);
    assert.equal(parse(body).raw, undefined);
  });
  test('synthetic policy rules round trip', () => {
    const d = rulesForFetchResult({ status: 500, nowMs: 0 });
    const restored = fromJSON(JSON.parse(toJSON(d.rules)) as unknown);
    assert.equal(restored.origin, 'unreachable');
    assert.equal(isAllowed(restored, '/x').allowed, false);
  });
  test('malformed stored data is rejected', () => {
    assert.throws(() => fromJSON('{"v":2}'));
    assert.throws(() => fromJSON('not json'));
    assert.throws(() => fromJSON({ v: 1, o: 'f', g: [[['*'], 1, [[2, '/x', 1]], null]], s: [], b: 0, t: 0 }));
  });
  test('agent recorded at parse time is the default for isAllowed', () => {
    const rules = parse(body, { agent: 'meguri/0.1' });
    assert.equal(isAllowed(rules, '/m').allowed, false);
    assert.equal(isAllowed(parse(body), '/m').allowed, true);
  });
  test('compiled matcher is reused per agent', () => {
    const rules = parse(body);
    assert.equal(forAgent(rules, 'meguri/0.1'), forAgent(rules, 'Meguri/9'));
    assert.equal(forAgent(rules, UA).ruleCount, 1);
    assert.equal(forAgent(rules, 'otherbot').group, '*');
  });
});

describe('explain and the robots check command', () => {
  const body = 'User-agent: *\nAllow: /private/ok\n\n# members only\n\n\nDisallow: /private*\n';

  test('explain describes the deciding rule in input order', () => {
    assert.deepEqual(explain(parse(body), UA, ['/private/x', '/public', '/private/ok']), [
      { url: '/private/x', allowed: false, rule: 'Disallow: /private* (line 7)' },
      { url: '/public', allowed: true, rule: null },
      { url: '/private/ok', allowed: true, rule: 'Allow: /private/ok (line 2)' },
    ]);
  });
  test('explain names the policy for synthetic rules', () => {
    const d = rulesForFetchResult({ status: 503, nowMs: 0 });
    assert.deepEqual(explain(d.rules, UA, ['/a']), [{ url: '/a', allowed: false, rule: 'Disallow: / (robots.txt unreachable)' }]);
  });

  const dir = mkdtempSync(join(tmpdir(), 'robots-test-'));
  const file = join(dir, 'robots.txt');
  writeFileSync(file, body);
  const run = (opts: { json?: boolean; urls: string[]; robotsFile?: string; agent?: string }): { code: number; lines: string[] } => {
    const lines: string[] = [];
    const code = robotsCheckCommand(
      { robotsFile: opts.robotsFile ?? file, agent: opts.agent ?? UA, json: opts.json ?? false, urls: opts.urls },
      (l) => lines.push(l),
    );
    return { code, lines };
  };

  test('text output, exit 1 when something is blocked', () => {
    const { code, lines } = run({ urls: ['https://e.com/private/x', 'https://e.com/about'] });
    assert.equal(code, 1);
    assert.deepEqual(lines, [
      'BLOCKED  https://e.com/private/x  Disallow: /private* (line 7)',
      'ALLOWED  https://e.com/about  (no matching rule)',
    ]);
  });
  test('json output, exit 0 when everything is allowed', () => {
    const { code, lines } = run({ json: true, urls: ['/b', '/private/ok'] });
    assert.equal(code, 0);
    assert.equal(lines.length, 1);
    assert.deepEqual(JSON.parse(lines[0] ?? ''), [
      { url: '/b', allowed: true, rule: null },
      { url: '/private/ok', allowed: true, rule: 'Allow: /private/ok (line 2)' },
    ]);
  });
  test('unreadable file or no URLs: exit 2', () => {
    assert.equal(run({ urls: ['/'], robotsFile: join(dir, 'missing.txt') }).code, 2);
    assert.equal(run({ urls: [] }).code, 2);
  });
  test('an agent without a product token is checked against the * group, with a note on err', () => {
    const agentFile = join(dir, 'agents.txt');
    writeFileSync(agentFile, 'User-agent: *\nDisallow: /\nUser-agent: Foo Bar\nAllow: /x/\nDisallow: /\n');
    for (const agent of ['Foo Bar', '', ' ']) {
      const out: string[] = [];
      const err: string[] = [];
      const code = robotsCheckCommand({ robotsFile: agentFile, agent, json: true, urls: ['/x/y'] }, (l) => out.push(l), (l) => err.push(l));
      assert.equal(code, 1, `agent ${JSON.stringify(agent)}`);
      assert.deepEqual(JSON.parse(out.join('')), [{ url: '/x/y', allowed: false, rule: 'Disallow: / (line 2)' }]);
      assert.equal(err.length, 1);
      assert.match(err[0] ?? '', /names no product token/);
    }
    const out: string[] = [];
    const err: string[] = [];
    assert.equal(robotsCheckCommand({ robotsFile: agentFile, agent: 'Foo', urls: ['/x/y'] }, (l) => out.push(l), (l) => err.push(l)), 0);
    assert.deepEqual(out, ['ALLOWED  /x/y  Allow: /x/ (line 4)']);
    assert.deepEqual(err, []);
    rmSync(dir, { recursive: true, force: true });
  });
});
