/** The fetcher's public surface: FrontierRecord in, PageRecord out. */
export { createFetcher, defaultUserAgent, DEFAULT_CONTACT, FETCHER_DEFAULTS, FETCHER_VERSION } from './fetch.ts';
export type { Fetcher, FetcherOptions, FetcherStats } from './fetch.ts';
export { createResolver, parseResolveEntry, StaticResolveMap } from './dns.ts';
export { AddressPolicy, isNonPublicAddress, parseCidr } from './address-policy.ts';
export type { AddressPolicyOptions, AddressVerdict } from './address-policy.ts';
export type { NameResolver, RawResolve, ResolveEntry, ResolverOptions, ResolverStats, StaticResolverOptions, SystemResolverOptions } from './dns.ts';
export { FETCH_ERRORS, FetchError, isRetryable } from './errors.ts';
export type { FetchErrorCode } from './errors.ts';
