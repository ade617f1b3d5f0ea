// Micro-benchmark of robots.txt matching: a realistic 50-rule file, a mix of URLs, matches/s for
// the compiled per-agent matcher, the isAllowed() convenience call, and robots-parser for scale.
// Run: npx tsx bench/robots.bench.ts
import { createRequire } from 'node:module';
import { forAgent, isAllowed, parse } from '../services/scheduler/robots/index.ts';

const UA = 'meguri/0.1 (+https://example.org/bot)';

// robots-parser is CommonJS with a default-export typing that NodeNext cannot call; load it plainly.
interface ReferenceRobots {
  isAllowed(url: string, ua?: string): boolean | undefined;
}
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, body: string) => ReferenceRobots;

const starRules = [
  'Disallow: /admin/',
  'Disallow: /cart',
  'Disallow: /checkout/',
  'Disallow: /account/',
  'Disallow: /login',
  'Disallow: /logout',
  'Disallow: /register',
  'Disallow: /search',
  'Allow: /search/about',
  'Disallow: /*?sort=',
  'Disallow: /*&sort=',
  'Disallow: /*?sessionid=',
  'Disallow: /*&sessionid=',
  'Disallow: /*?utm_',
  'Disallow: /*.pdf$',
  'Disallow: /*.json$',
  'Disallow: /*/print$',
  'Disallow: /tmp/',
  'Disallow: /cgi-bin/',
  'Disallow: /wp-admin/',
  'Allow: /wp-admin/admin-ajax.php',
  'Disallow: /api/',
  'Allow: /api/public/',
  'Disallow: /private*',
  'Disallow: /drafts/',
  'Disallow: /preview/',
  'Disallow: /*/edit',
  'Disallow: /*/history',
  'Disallow: /compare/',
  'Disallow: /wishlist',
  'Disallow: /user/*/settings',
  'Disallow: /static/tmp/',
  'Allow: /static/',
  'Disallow: /feeds/*/raw',
  'Disallow: /*/amp$',
  'Disallow: /intl/*/about/legal',
  'Disallow: /café/menu',
  'Disallow: /%7Estaff/',
  'Disallow: /beta/',
  'Disallow: /old-site/',
  'Disallow: /*?replytocom=',
  'Disallow: /*/trackback/',
  'Disallow: /tag/*/page/',
  'Disallow: /out/',
  'Disallow: /redirect?url=',
  'Disallow: /internal-search/',
  'Allow: /internal-search/help$',
  'Disallow: /*.xml.gz$',
  'Disallow: /media/originals/',
  'Disallow: /newsletter/confirm',
];
const body = [
  '# robots.txt for www.example.com',
  'User-agent: Googlebot',
  'Disallow: /nogoogle/',
  'Allow: /',
  '',
  'User-agent: bingbot',
  'Crawl-delay: 2',
  'Disallow: /nobing/',
  '',
  'User-agent: *',
  ...starRules,
  '',
  'User-agent: meguri',
  'Disallow: /admin/',
  'Disallow: /cart',
  'Disallow: /*?sort=',
  'Disallow: /*.pdf$',
  'Allow: /public/',
  '',
  'Sitemap: https://www.example.com/sitemap.xml',
].join('\n');

const paths = [
  '/',
  '/products/shoes/running/model-123',
  '/products/shoes/running/model-123?color=red&size=42',
  '/products?sort=price&page=2',
  '/blog/2026/01/15/a-long-article-title-about-things',
  '/blog/2026/01/15/a-long-article-title-about-things/amp',
  '/docs/guide/getting-started.pdf',
  '/search?q=shoes',
  '/account/orders/77',
  '/static/css/site.8f3a1c.css',
  '/static/tmp/x',
  '/api/public/v1/items',
  '/user/alice/settings',
  '/user/alice/profile',
  '/caf%C3%A9/menu',
  '/~staff/list',
  '/wiki/Some_Page/history',
  '/news/world/2026/story-4567?utm_source=feed',
  '/category/electronics/phones/smartphones?page=3&sessionid=abc',
  '/about/team',
];
const urls = paths.map((p, i) => (i % 2 === 0 ? `https://www.example.com${p}` : p));

function bench(label: string, fn: (url: string) => boolean, minMs = 1000): void {
  let blocked = 0;
  for (let i = 0; i < 50_000; i++) if (!fn(urls[i % urls.length] as string)) blocked++; // warm up
  let n = 0;
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  let elapsedMs = 0;
  while (elapsedMs < minMs) {
    for (let i = 0; i < 100_000; i++) if (!fn(urls[i % urls.length] as string)) blocked++;
    n += 100_000;
    elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const cpu = process.cpuUsage(cpuStart);
  const perSec = (n / elapsedMs) * 1000;
  // CPU time per match as well: on a shared machine wall-clock rates swing with the load.
  const cpuNs = ((cpu.user + cpu.system) * 1000) / n;
  console.log(
    `${label.padEnd(34)} ${(perSec / 1e6).toFixed(2).padStart(6)} M matches/s  (${(1e9 / perSec).toFixed(0)} ns/match wall, ${cpuNs.toFixed(0)} ns CPU, ${blocked} blocked)`,
  );
}

const rules = parse(body);
const effective = forAgent(rules, 'otherbot').ruleCount;
const ruleLines = body.split('\n').filter((l) => /^(allow|disallow):/i.test(l)).length;
console.log(`robots.txt: ${ruleLines} allow/disallow lines, ${effective} in the * group; ${urls.length} distinct URLs`);

const matcher = forAgent(rules, 'otherbot/1.0');
bench('forAgent(*).isAllowed', (u) => matcher.isAllowed(u).allowed);
const meguri = forAgent(rules, UA);
bench('forAgent(meguri).isAllowed', (u) => meguri.isAllowed(u).allowed);
bench('isAllowed(rules, url, agent)', (u) => isAllowed(rules, u, 'otherbot/1.0').allowed);

const reference = robotsParser('https://www.example.com/robots.txt', body);
bench('robots-parser (reference)', (u) => reference.isAllowed(u.startsWith('/') ? `https://www.example.com${u}` : u, 'otherbot') !== false, 500);

const t0 = process.hrtime.bigint();
for (let i = 0; i < 1000; i++) parse(body);
console.log(`parse: ${(Number(process.hrtime.bigint() - t0) / 1e6 / 1000).toFixed(3)} ms per file`);
