export * from './graph.ts';
export * from './heap.ts';
export * from './pagerank.ts';
export * from './strategies.ts';
export * from './simulate.ts';
export { chartSvg } from './chart.ts';
export { simulateCommand, resolveSeed, defaultUrlsPath, type SimulateArgs } from './cli.ts';
