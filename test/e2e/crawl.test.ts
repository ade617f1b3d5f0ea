/** The crawl loop end to end on the embedded log (test/support/crawl-loop.ts says what it checks). */
import { crawlLoopTests } from '../support/crawl-loop.ts';

crawlLoopTests('embedded');
