/**
 * The runtime's TestDriver on a small word-count service of its own: batches commit atomically,
 * inputs are validated like consumed records, outputs are captured typed with keys and partitions,
 * punctuations follow the manual clock, failures roll back to the committed state and isolate the
 * record that breaks the processor, and the size guard and output schemas hold.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { TestDriver, TransientError, FatalServiceError, partitionForKey, ServiceDefinitionError, EncodedValue } from '../../services/runtime/index.ts';
import type { ServiceDefinition, TopicCatalog, Processor, ProcessorContext, InputRecord } from '../../services/runtime/index.ts';

const T0 = Date.UTC(2026, 0, 1);

const wordSchema = z.object({ word: z.string().min(1) });
const countSchema = z.object({ word: z.string(), count: z.number().int().positive() });
const tickSchema = z.object({ at: z.number().int(), words: z.number().int() });
type Word = z.infer<typeof wordSchema>;
interface Records {
  words: Word;
  counts: z.infer<typeof countSchema>;
  ticks: z.infer<typeof tickSchema>;
  [topic: string]: unknown;
}

const schemas: Record<string, z.ZodType> = { words: wordSchema, counts: countSchema, ticks: tickSchema };

function catalog(maxBytes?: number): TopicCatalog {
  return {
    schema: (logical) => schemas[logical],
    topic: () => ({ partitions: 4, config: maxBytes ? { 'max.message.bytes': String(maxBytes) } : ({} as Record<string, string>) }),
    changelog: (group, store, partitions) => ({ name: `${group}-${store}-changelog`, partitions, config: {} }),
    deadletterVersion: 1,
  };
}

interface Behaviour {
  /** Words whose processing throws (a poison record). */
  poison?: Set<string>;
  /** Words that throw a transient error the first `n` times. */
  flaky?: Map<string, number>;
  /** Emit this to an undeclared topic when seen. */
  strayWord?: string;
  /** Emit a schema-breaking count when seen. */
  badOutputWord?: string;
  tickMs?: number;
  inits?: number[];
}

/** Counts words per key in a store; the count object is mutated in place before it is put back. */
class WordCounter implements Processor<Word, Records> {
  constructor(private readonly b: Behaviour) {}
  async init(ctx: ProcessorContext<Records>): Promise<void> {
    this.b.inits?.push(ctx.now());
    ctx.schedule(this.b.tickMs ?? 1000, async (c) => {
      let words = 0;
      for await (const [, v] of c.store<{ count: number }>('counts').range()) words += v.count;
      c.emit('ticks', null, { at: c.now(), words });
    });
  }
  async process(records: readonly InputRecord<Word>[], ctx: ProcessorContext<Records>): Promise<void> {
    const store = ctx.store<{ count: number }>('counts');
    for (const r of records) {
      const word = r.value.word;
      const state = (await store.get(word)) ?? { count: 0 };
      state.count++; // in place: the runtime's cache must not keep this if the batch fails
      store.put(word, state);
      const flaky = this.b.flaky?.get(word) ?? 0;
      if (flaky > 0) {
        this.b.flaky!.set(word, flaky - 1);
        throw new TransientError(`flaky ${word}`);
      }
      if (this.b.poison?.has(word)) throw new Error(`cannot count ${word}`);
      if (word === this.b.strayWord) (ctx as unknown as ProcessorContext).emit('elsewhere', null, {});
      // "echo:x" counts itself and sends x back through the words topic the service reads.
      if (word.startsWith('echo:')) ctx.emit('words', word.slice(5), { word: word.slice(5) });
      // "enc:x" is counted by a value encoded before it is emitted (as a worker thread would).
      if (word.startsWith('enc:')) {
        ctx.emit('counts', word, new EncodedValue(Buffer.from(JSON.stringify({ word, count: state.count }))));
        continue;
      }
      if (word === this.b.badOutputWord) {
        ctx.emit('counts', word, { word, count: -1 });
        continue;
      }
      ctx.emit('counts', word, { word, count: state.count });
    }
  }
}

function service(b: Behaviour = {}): ServiceDefinition<Word, Records> {
  return {
    name: 'wordcount',
    inputs: ['words'],
    outputs: ['counts', 'ticks', 'words'],
    stores: [{ name: 'counts', changelog: true }],
    guarantee: 'exactly-once',
    createProcessor: () => new WordCounter(b),
  };
}

const words = (...ws: string[]) => ws.map((word) => ({ key: word, value: { word } }));

describe('TestDriver', () => {
  let driver: TestDriver<Word, Records> | undefined;
  afterEach(async () => {
    await driver?.close();
    driver = undefined;
  });

  it('runs a batch, commits it, and captures typed outputs with keys and partitions', async () => {
    driver = await TestDriver.open(service(), { catalog: catalog(), startMs: T0 });
    await driver.pipeInput('words', words('a', 'b', 'a'));
    const out = driver.readOutput('counts');
    assert.deepEqual(out.map((r) => [r.key, r.value.word, r.value.count]), [['a', 'a', 1], ['b', 'b', 1], ['a', 'a', 2]]);
    for (const r of out) {
      assert.equal(r.partition, partitionForKey(r.key, 4), 'the partition the transports would pick');
      assert.equal(r.timestamp, T0);
      assert.equal(r.topic, 'counts');
    }
    assert.deepEqual(driver.readOutput('counts'), [], 'readOutput returns what is new since the last read');
    await driver.pipeInput('words', { key: 'c', value: { word: 'c' } });
    assert.equal(driver.readOutput('counts').length, 1);
    assert.equal(driver.allOutput('counts').length, 4);
    assert.deepEqual(await driver.store<{ count: number }>('counts').range(), [['a', { count: 2 }], ['b', { count: 1 }], ['c', { count: 1 }]]);
    assert.deepEqual(driver.deadLetters(), []);
    assert.deepEqual(driver.failures, []);
  });

  it('validates inputs against the catalog: bad records become dead letters, the rest of the batch goes on', async () => {
    driver = await TestDriver.open(service(), { catalog: catalog() });
    await driver.pipeInput('words', [
      { key: 'x', value: Buffer.from('{not json') },
      { key: 'y', value: { word: '' } as Word },
      { key: 'z', value: null },
      ...words('ok'),
    ]);
    assert.deepEqual(driver.readOutput('counts').map((r) => r.value), [{ word: 'ok', count: 1 }]);
    const dead = driver.deadLetters();
    assert.deepEqual(dead.map((d) => [d.code, d.key, d.origin.offset]), [['MEGURI_ERR_DECODE', 'x', '0'], ['MEGURI_ERR_SCHEMA', 'y', '1'], ['MEGURI_ERR_DECODE', 'z', '2']]);
    assert.equal(dead[0]!.value, '{not json');
    assert.match(dead[1]!.reason, /word/);
    await assert.rejects(driver.pipeInput('counts', words('a')), ServiceDefinitionError, 'only declared inputs');
  });

  it('runs punctuations on the manual clock: not before they are due, once per advance', async () => {
    driver = await TestDriver.open(service({ tickMs: 1000 }), { catalog: catalog(), startMs: T0 });
    await driver.pipeInput('words', words('a', 'a'));
    await driver.advanceTime(999);
    assert.deepEqual(driver.readOutput('ticks'), []);
    await driver.advanceTime(1);
    assert.deepEqual(driver.readOutput('ticks').map((r) => r.value), [{ at: T0 + 1000, words: 2 }]);
    // Ten intervals in one jump: one run, as a task's timer when the clock jumps; the next is due an interval later.
    await driver.advanceTime(10_000);
    assert.deepEqual(driver.readOutput('ticks').map((r) => r.value.at), [T0 + 11_000]);
    await driver.advanceTime(999);
    assert.deepEqual(driver.readOutput('ticks'), []);
    await driver.advanceTime(1);
    assert.equal(driver.readOutput('ticks').length, 1);
    assert.equal(driver.now(), T0 + 12_000);
  });

  it('a failed batch leaves the committed state as it was (in-place changes included), and the poison record is dead-lettered', async () => {
    const b: Behaviour = { poison: new Set(['bad']), inits: [] };
    driver = await TestDriver.open(service(b), { catalog: catalog() });
    await driver.pipeInput('words', words('a'));
    await driver.pipeInput('words', words('a', 'bad', 'b'));
    // Whole batch 3 times, then record by record: a and b counted once each, bad dead-lettered.
    assert.deepEqual(await driver.store<{ count: number }>('counts').range(), [['a', { count: 2 }], ['b', { count: 1 }]]);
    assert.deepEqual(driver.readOutput('counts').map((r) => [r.key, r.value.count]), [['a', 1], ['a', 2], ['b', 1]]);
    const dead = driver.deadLetters();
    assert.equal(dead.length, 1);
    assert.equal(dead[0]!.code, 'MEGURI_ERR_PROCESSING');
    assert.equal(dead[0]!.key, 'bad');
    assert.match(dead[0]!.reason, /cannot count bad/);
    assert.deepEqual(driver.failures.map((f) => f.stage), ['batch', 'batch', 'batch', 'record', 'record']);
    assert.equal(b.inits!.length, 1 + 5, 'the processor is rebuilt from committed state after each failure');
  });

  it('retries a transient failure without dead-lettering anything; fatal errors reach the test', async () => {
    driver = await TestDriver.open(service({ flaky: new Map([['f', 4]]), strayWord: 'stray' }), { catalog: catalog() });
    await driver.pipeInput('words', words('f'));
    assert.deepEqual(driver.readOutput('counts').map((r) => r.value), [{ word: 'f', count: 1 }]);
    assert.deepEqual(driver.deadLetters(), []);
    assert.equal(driver.failures.length, 4);
    // An emit to an undeclared topic is a definition error: fatal in the runtime, thrown here.
    await assert.rejects(driver.pipeInput('words', words('stray')), (err: unknown) => err instanceof ServiceDefinitionError && /elsewhere/.test(err.message));
    await driver.close();
    driver = await TestDriver.open({ ...service(), createProcessor: () => ({ process: () => { throw new FatalServiceError('disk gone'); } }) }, { catalog: catalog() });
    await assert.rejects(driver.pipeInput('words', words('a')), /disk gone/);
  });

  it('guards output sizes like the runtime and checks outputs against their schemas', async () => {
    driver = await TestDriver.open(service({ badOutputWord: 'neg' }), { catalog: catalog(), maxMessageBytes: { counts: 300 } });
    const long = 'w'.repeat(400);
    await driver.pipeInput('words', words(long, 'short'));
    assert.deepEqual(driver.readOutput('counts').map((r) => r.key), ['short']);
    const [dead] = driver.deadLetters();
    assert.equal(dead!.code, 'MEGURI_ERR_RECORD_TOO_LARGE');
    assert.match(dead!.reason, /300-byte max\.message\.bytes/);
    await assert.rejects(driver.pipeInput('words', words('neg')), /emitted a counts record that does not match its schema \(count:/);
  });

  it('emits encoded values as their bytes, with the same size guard and schema check', async () => {
    driver = await TestDriver.open(service({ badOutputWord: 'neg' }), { catalog: catalog(), maxMessageBytes: { counts: 300 } });
    await driver.pipeInput('words', words('enc:a', 'enc:a', `enc:${'w'.repeat(400)}`));
    assert.deepEqual(
      driver.readOutput('counts').map((r) => [r.key, r.value]),
      [
        ['enc:a', { word: 'enc:a', count: 1 }],
        ['enc:a', { word: 'enc:a', count: 2 }],
      ],
    );
    assert.deepEqual(driver.deadLetters().map((d) => d.code), ['MEGURI_ERR_RECORD_TOO_LARGE']);
  });

  it('restart reopens the stores on the same directory: committed state and punctuations come back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-driver-test-'));
    try {
      const b: Behaviour = { inits: [] };
      driver = await TestDriver.open(service(b), { catalog: catalog(), dataDir: dir, startMs: T0 });
      await driver.pipeInput('words', words('a', 'a'));
      await driver.advanceTime(500);
      await driver.restart();
      assert.deepEqual(b.inits, [T0, T0 + 500]);
      await driver.pipeInput('words', words('a'));
      assert.equal(driver.readOutput('counts').at(-1)!.value.count, 3);
      await driver.advanceTime(600);
      assert.deepEqual(driver.readOutput('ticks'), [], 'the timer restarted with the processor');
      await driver.advanceTime(400);
      assert.deepEqual(driver.readOutput('ticks').map((r) => r.value.words), [3]);
      await driver.close();
      driver = undefined;
      assert.ok(existsSync(dir), 'a directory given in the options is left in place');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('feeds outputs to a topic the service reads back to it, on its own partition, until none are left', async () => {
    driver = await TestDriver.open(service(), { catalog: catalog(), partitions: 1 });
    await driver.pipeInput('words', words('echo:echo:a'));
    assert.deepEqual(driver.readOutput('counts').map((r) => r.key), ['echo:echo:a', 'echo:a', 'a']);
    assert.deepEqual(driver.readOutput('words').map((r) => r.value.word), ['echo:a', 'a']);
    await driver.close();
    // With four partitions only the echoes that land on the driver's partition come back.
    driver = await TestDriver.open(service(), { catalog: catalog(), partition: 1 });
    const echoes = ['p', 'q', 'r', 's', 't', 'u', 'v', 'w'];
    await driver.pipeInput('words', words(...echoes.map((w) => `echo:${w}`)));
    const back = echoes.filter((w) => partitionForKey(w, 4) === 1);
    assert.ok(back.length > 0 && back.length < echoes.length);
    assert.deepEqual(driver.readOutput('counts').slice(echoes.length).map((r) => r.key), back);
    await driver.close();
    driver = await TestDriver.open(service(), { catalog: catalog(), partitions: 1, loopback: false });
    await driver.pipeInput('words', words('echo:a'));
    assert.equal(driver.readOutput('counts').length, 1);
  });

  it("runs a concurrent service record by record: each record's outputs together, a failing record dead-lettered", async () => {
    const lengths: ServiceDefinition<Word, Records> = {
      name: 'lengths',
      inputs: ['words'],
      outputs: ['counts'],
      guarantee: 'at-least-once',
      concurrent: {
        maxInFlight: 4,
        createRecordProcessor: () => ({
          processRecord: async (record, ctx) => {
            ctx.emit('counts', record.value.word, { word: record.value.word, count: record.value.word.length });
            if (record.value.word === 'boom') throw new Error('exploded');
            ctx.emit('counts', record.value.word, { word: record.value.word, count: 1 });
          },
        }),
      },
    };
    driver = await TestDriver.open(lengths, { catalog: catalog() });
    await driver.pipeInput('words', [...words('abc', 'boom', 'de'), { key: 'bad', value: Buffer.from('[]') }]);
    assert.deepEqual(driver.readOutput('counts').map((r) => [r.key, r.value.count]), [['abc', 3], ['abc', 1], ['de', 2], ['de', 1]], 'nothing of the failed record');
    assert.deepEqual(driver.deadLetters().map((d) => [d.key, d.code]), [['boom', 'MEGURI_ERR_PROCESSING'], ['bad', 'MEGURI_ERR_SCHEMA']]);
    assert.throws(() => driver!.store('counts'), /declares no stores/);
  });

  it('removes its own directory on close; store views are copies; one step at a time', async () => {
    driver = await TestDriver.open(service(), { catalog: catalog() });
    const dir = driver.dataDir;
    await driver.pipeInput('words', words('a'));
    const view = driver.store<{ count: number }>('counts');
    const a = await view.get('a');
    a!.count = 99;
    assert.deepEqual(await view.get('a'), { count: 1 });
    assert.deepEqual(await view.keys(), ['a']);
    const first = driver.pipeInput('words', words('b'));
    await assert.rejects(driver.advanceTime(1), /already running/);
    await first;
    await driver.close();
    driver = undefined;
    assert.equal(existsSync(dir), false);
  });
});
