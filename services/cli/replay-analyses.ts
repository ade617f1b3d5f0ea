/** What `meguri replay --into` can make of a topic (see replay.ts); apart so `--help` lists them without loading the parser. */
export const replayAnalyses = ['records', 'parse', 'summary'] as const;
export type ReplayAnalysis = (typeof replayAnalyses)[number];
