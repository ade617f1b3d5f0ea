/**
 * Politeness policy of the scheduler: pure functions over a small per-host record. See
 * docs/politeness.md for the rules, their sources and how they combine.
 */
export { politenessConfigSchema, politenessConfig, politenessFromSchedulerOptions, DEFAULT_RING_ERROR_CODES, DEFAULT_FAILURE_ERROR_CODES } from './config.ts';
export type { PolitenessConfig, PolitenessConfigInput } from './config.ts';
export { RING_SIZE, emptyPoliteness, pushRing, ringErrorCount, ringSpeedBytesPerS, lastFetchMs } from './state.ts';
export type { PolitenessState } from './state.ts';
export { dynamicIntervalMs, kFor, kTimesEMs, hostInterval } from './interval.ts';
export type { PolitenessContext, HostInterval, IntervalRule } from './interval.ts';
export { afterOutcome, beforeRequest, isHostFailure, backoffMs, parkMs } from './policy.ts';
export type { PolitenessOutcome, AfterOutcome, BeforeRequest, NextReason, WaitReason, IpContext } from './policy.ts';
export { underPageCap, siteCapKey, withinDepth, withinCgiHops, linkCapExceeded, mayStartOnIp, mayOverlap, ipStarted, ipFinished } from './caps.ts';
export { changePageInterval, loadIndex, loadReport, topByLoad } from './load.ts';
export type { LoadRow } from './load.ts';
export { remedyFor, applyRemedy, histogramChange, intervalBin } from './remedy.ts';
export type { OverloadRemedy, Remedy } from './remedy.ts';
