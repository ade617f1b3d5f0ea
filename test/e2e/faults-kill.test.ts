/**
 * Fault campaign on the shared test broker (docs/reliability.md): a crawl by 2 schedulers, 2 fetchers
 * and 2 parsers as separate `meguri run` processes, without faults and with repeated kill -9 of a
 * random service; every reachable page fetched, nothing lost or issued twice, re-fetches bounded by
 * what killed fetchers had in flight, no duplicate `changes`.
 */
import { describe, it } from 'node:test';
import { kafkaBrokers } from '../support/transports.ts';
import { runScenario } from '../support/fault-scenarios.ts';
import { assertPromisesKept } from '../support/fault-assertions.ts';
import { faultTestSettings } from '../support/fault-test-settings.ts';

describe('fault campaign: kill -9 of random services', { timeout: 900_000 }, () => {
  const broker = { brokers: kafkaBrokers().join(',') };

  it('crawls the whole simulated web without faults, each page once', async () => {
    const { figures } = await runScenario('no faults', broker, faultTestSettings());
    assertPromisesKept(figures);
  });

  it('survives kill -9 of a random service, three times, with nothing lost or issued twice', async () => {
    const { figures } = await runScenario('kill -9 random', broker, faultTestSettings());
    assertPromisesKept(figures);
  });
});
