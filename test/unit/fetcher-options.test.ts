import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FETCHER_DEFAULTS } from '../../services/fetcher/defaults.ts';
import { fetcherSettings, fetcherSettingsSchema } from '../../services/fetcher/options.ts';
import { createFetcher } from '../../services/fetcher/fetch.ts';

test('settings left out or undefined take their defaults; other options are not settings', () => {
  assert.deepEqual(fetcherSettings({}), FETCHER_DEFAULTS);
  const s = fetcherSettings({ maxRedirects: 0, totalTimeoutMs: undefined, oversize: 'error', userAgent: 'x', contact: 'y' });
  assert.deepEqual(s, { ...FETCHER_DEFAULTS, maxRedirects: 0, oversize: 'error' });
});

test('a bad setting is a RangeError that names it, from createFetcher too', () => {
  const bad: [Parameters<typeof fetcherSettings>[0], RegExp][] = [
    [{ totalTimeoutMs: 0 }, /totalTimeoutMs/],
    [{ maxBodyBytes: Number.POSITIVE_INFINITY }, /maxBodyBytes/],
    [{ connectTimeoutMs: Number.NaN }, /connectTimeoutMs/],
    [{ connectionsPerOrigin: 3 }, /connectionsPerOrigin/],
    [{ maxRedirects: 16 }, /maxRedirects/],
    [{ maxRedirects: 1.5 }, /maxRedirects/],
    [{ discardBodyBytes: -1 }, /discardBodyBytes/],
    [{ perIpConcurrency: 0 }, /perIpConcurrency/],
    [{ oversize: 'drop' as 'error' }, /oversize/],
  ];
  for (const [options, name] of bad) {
    assert.throws(() => fetcherSettings(options), (e: unknown) => e instanceof RangeError && name.test(e.message), JSON.stringify(options));
    assert.throws(() => createFetcher(options), RangeError, JSON.stringify(options));
  }
});

test('the schema is strict: a key that is not a setting is refused', () => {
  assert.equal(fetcherSettingsSchema.safeParse({ maxRedirect: 3 }).success, false);
  assert.equal(fetcherSettingsSchema.safeParse({ maxRedirects: 3 }).success, true);
});
