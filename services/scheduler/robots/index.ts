/** robots.txt engine: parsing, matching, fetch-status policy and storage. Pure logic, no I/O. */
export type { Directive, MatchResult, MatchedRule, RobotsGroup, RobotsOrigin, RobotsRule, RobotsRules } from './types.ts';
export { DEFAULT_MAX_BYTES, MAX_LINE_BYTES, groupToken, isValidProductToken, parse, productToken } from './parse.ts';
export type { ParseOptions } from './parse.ts';
export { canonicalize, pathAndQuery } from './encoding.ts';
export { crawlDelay, forAgent, isAllowed } from './match.ts';
export type { AgentMatcher } from './match.ts';
export { DEFAULT_POLICY, allowAllRules, disallowAllRules, rulesForFetchResult } from './policy.ts';
export type { RobotsFetchDecision, RobotsFetchOutcome, RobotsFetchResult, RobotsPolicyOptions } from './policy.ts';
export { fromJSON, toJSON } from './serialize.ts';
export { STORED_RULES_BYTES, boundRules } from './bound.ts';
export { describeRule, explain } from './explain.ts';
export type { ExplainEntry } from './explain.ts';
