/** The crawl loop end to end on Kafka (test/support/crawl-loop.ts says what it checks). */
import { crawlLoopTests } from '../support/crawl-loop.ts';

crawlLoopTests('kafka');
