/** kafkajs with meguri's read_committed fix installed (see kafkajs.cjs); import kafkajs only from here. */
import kafkajs from './kafkajs.cjs';

export { kafkajs };
