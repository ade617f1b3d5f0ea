// meguri's one-pass record batch for kafkajs produce requests (services/runtime/kafka/record-batch.cjs):
// byte for byte what kafkajs 2.2.4's own Record and RecordBatch write.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it, mock } from 'node:test';
import { measureRecord, crc32c } from '../../services/runtime/kafka/record-batch.cjs';
import '../../services/runtime/kafka/kafkajs.ts';

const require = createRequire(import.meta.url);
const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));
const src = (...p: string[]): string => path.join(kafkajsDir, 'src', ...p);

type Encoded = { buffer: Buffer; size(): number };
type RecordFn = (r: Record<string, unknown>) => unknown;
type RecordBatchFn = (b: Record<string, unknown>) => Promise<Encoded>;

/** kafkajs's own module at `file`, as it ships (loaded beside the installed replacement). */
function original<T>(file: string): T {
  const saved = require.cache[file];
  delete require.cache[file];
  try {
    return require(file) as T;
  } finally {
    if (saved) require.cache[file] = saved;
    else delete require.cache[file];
  }
}

/** kafkajs's modules at `files`, loaded together as they ship (each requires the others' originals). */
function originals<T>(files: readonly string[], main: string): T {
  const saved = files.map((f) => require.cache[f]);
  for (const f of files) delete require.cache[f];
  try {
    return require(main) as T;
  } finally {
    files.forEach((f, i) => {
      if (saved[i]) require.cache[f] = saved[i];
      else delete require.cache[f];
    });
  }
}

type ProduceFn = (r: Record<string, unknown>) => { apiKey: number; apiVersion: number; apiName: string; expectResponse(): boolean; encode(): Promise<Encoded> };
const producePath = src('protocol', 'requests', 'produce', 'v3', 'request.js');
const kafkajsProduce = originals<ProduceFn>(
  [producePath, src('protocol', 'recordBatch', 'record', 'v0', 'index.js'), src('protocol', 'recordBatch', 'v0', 'index.js'), src('protocol', 'recordBatch', 'crc32C', 'index.js')],
  producePath,
);
const installedProduce = require(producePath) as ProduceFn;

type RequestFn = (r: { correlationId: number; clientId: string | null; request: { apiKey: number; apiVersion: number; encode(): Promise<Encoded> | Encoded } }) => Promise<Encoded>;
const requestPath = src('protocol', 'request.js');
const kafkajsRequest = original<RequestFn>(requestPath);
const installedRequest = require(requestPath) as RequestFn;
const KafkajsEncoder = require(src('protocol', 'encoder.js')) as new () => Encoded & { writeInt32(v: number): Encoded; writeString(v: string | null): Encoded };

const kafkajsRecord = original<RecordFn>(src('protocol', 'recordBatch', 'record', 'v0', 'index.js'));
const kafkajsRecordBatch = original<{ RecordBatch: RecordBatchFn }>(src('protocol', 'recordBatch', 'v0', 'index.js')).RecordBatch;
const kafkajsCrc32C = original<(b: Buffer) => number>(src('protocol', 'recordBatch', 'crc32C', 'index.js'));
const installed = require(src('protocol', 'recordBatch', 'v0', 'index.js')) as { RecordBatch: RecordBatchFn };
const Long = require(src('utils', 'long.js')) as { fromValue(v: unknown): unknown };
const { Types } = require(src('protocol', 'message', 'compression', 'index.js')) as { Types: { None: number; GZIP: number } };

interface Message {
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[]>;
  offsetDelta: number;
  timestampDelta: number;
}

function messages(n: number, seed: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < n; i++) {
    const k = (i + seed) % 7;
    out.push({
      key: k === 0 ? null : k % 2 === 0 ? `host-${i}.sim.test ü` : randomBytes(i % 40),
      value: k === 3 ? null : k === 5 ? 'plain string ✓ '.repeat(i % 9) : randomBytes((i * 37) % 3000),
      ...(k === 4 ? { headers: { a: 'x', b: Buffer.from([1, 2, 3]), multi: ['1', Buffer.from('two')] } } : {}),
      offsetDelta: i,
      timestampDelta: [0, 1, 63, 64, 8191, 8192, -1, -65, 2 ** 31, 2 ** 40 + 3, -(2 ** 35)][i % 11]!,
    });
  }
  return out;
}

async function both(batch: Record<string, unknown>, msgs: readonly Message[]): Promise<[Buffer, Buffer]> {
  const ours = await installed.RecordBatch({ ...batch, records: msgs.map((m) => measureRecord(m)) });
  const theirs = await kafkajsRecordBatch({ ...batch, records: msgs.map((m) => kafkajsRecord(m as unknown as Record<string, unknown>)) });
  assert.equal(ours.size(), ours.buffer.length);
  return [ours.buffer, theirs.buffer];
}

describe('kafkajs record batch', () => {
  it('is installed in the kafkajs meguri loads', () => {
    assert.notEqual(installed.RecordBatch, kafkajsRecordBatch);
    assert.equal(require(src('protocol', 'recordBatch', 'record', 'v0', 'index.js')), measureRecord);
  });

  it('writes the bytes kafkajs writes: keys, values and headers of every kind, varints of every width', async () => {
    for (const [n, seed] of [
      [1, 0],
      [7, 3],
      [250, 1],
    ] as const) {
      const msgs = messages(n, seed);
      const batch = {
        compression: Types.None,
        firstTimestamp: 1795847076274,
        maxTimestamp: 1795847079999,
        lastOffsetDelta: n - 1,
        producerId: Long.fromValue(4711),
        producerEpoch: 3,
        firstSequence: 12345,
        transactional: seed % 2 === 1,
      };
      const [ours, theirs] = await both(batch, msgs);
      assert.ok(ours.equals(theirs), `${n} records: ${ours.length} bytes against ${theirs.length}`);
    }
  });

  it('takes timestamps as strings and the defaults as kafkajs does', async () => {
    const msgs = messages(5, 2);
    const [ours, theirs] = await both({ firstTimestamp: '1795847076274', maxTimestamp: '1795847076280', lastOffsetDelta: 4 }, msgs);
    // firstTimestamp/maxTimestamp given; the producer id, epoch and sequence take their defaults.
    assert.ok(ours.equals(theirs));
    const [emptyOurs, emptyTheirs] = await both({ firstTimestamp: 5, maxTimestamp: 5 }, []);
    assert.ok(emptyOurs.equals(emptyTheirs));
  });

  it('compresses the records as kafkajs does (gzip)', async () => {
    const msgs = messages(40, 5);
    const [ours, theirs] = await both({ compression: Types.GZIP, firstTimestamp: 10, maxTimestamp: 20, lastOffsetDelta: 39, producerId: Long.fromValue(9), transactional: true }, msgs);
    assert.ok(ours.equals(theirs));
  });

  it('encodes whole produce requests as kafkajs does: topics, partitions, timestamps, transactions', async () => {
    assert.notEqual(installedProduce, kafkajsProduce);
    const withTimestamps = (msgs: readonly Message[], stamps: readonly (string | number | undefined)[]) =>
      msgs.map(({ offsetDelta: _o, timestampDelta: _t, ...m }, i) => ({ ...m, ...(stamps[i % stamps.length] !== undefined ? { timestamp: stamps[i % stamps.length] } : {}) }));
    const topicData = [
      {
        topic: 'meguri.links',
        partitions: [
          { partition: 0, firstSequence: 7, messages: withTimestamps(messages(30, 1), ['1795847076274', '1795847076100', undefined, '1795847079000']) },
          { partition: 3, firstSequence: 0, messages: withTimestamps(messages(5, 4), [undefined]) },
        ],
      },
      { topic: 'meguri.pages', partitions: [{ partition: 1, messages: withTimestamps(messages(3, 6), [1795847076274, 999]) }] },
    ];
    for (const request of [
      { acks: -1, timeout: 30000, compression: Types.None, topicData, transactionalId: 'scheduler-0', producerId: Long.fromValue(12), producerEpoch: 2 },
      { acks: 1, timeout: 5000, compression: Types.GZIP, topicData },
      { acks: 0, timeout: 100, topicData: [] },
    ]) {
      const ours = installedProduce(request);
      const theirs = kafkajsProduce(request);
      assert.equal(ours.apiKey, theirs.apiKey);
      assert.equal(ours.apiVersion, theirs.apiVersion);
      assert.equal(ours.apiName, theirs.apiName);
      assert.equal(ours.expectResponse(), theirs.expectResponse());
      // Batches without timestamps take "now": the same clock for both.
      const clock = mock.method(Date, 'now', () => 1795847080000);
      try {
        const [a, b] = [(await ours.encode()).buffer, (await theirs.encode()).buffer];
        assert.ok(a.equals(b), `${a.length} bytes against ${b.length}`);
      } finally {
        clock.mock.restore();
      }
    }
  });

  it('frames requests as kafkajs does: a produce body written in place, any other body copied once', async () => {
    assert.notEqual(installedRequest, kafkajsRequest);
    const produce = {
      acks: -1,
      timeout: 30000,
      compression: Types.None,
      transactionalId: 'scheduler-2',
      producerId: Long.fromValue(77),
      producerEpoch: 1,
      topicData: [
        { topic: 'meguri.links', partitions: [{ partition: 2, firstSequence: 3, messages: messages(40, 2).map(({ offsetDelta: _o, timestampDelta: _t, ...m }) => ({ ...m, timestamp: 1795847076274 })) }] },
        { topic: 'meguri.frontier', partitions: [{ partition: 0, messages: [{ key: 'h1.sim.test', value: '{"url":"http://h1.sim.test/"}', timestamp: 1795847076275 }] }] },
      ],
    };
    const other = {
      apiKey: 3,
      apiVersion: 5,
      encode: () => {
        const e = new KafkajsEncoder();
        e.writeInt32(2);
        e.writeString('meguri.pages');
        e.writeString('ü'.repeat(300));
        return e;
      },
    };
    for (const clientId of ['meguri', null, 'クローラ-7']) {
      for (const [name, ours, theirs] of [
        ['produce', installedProduce(produce), kafkajsProduce(produce)],
        ['another request', other, other],
      ] as const) {
        const [a, b] = [
          (await installedRequest({ correlationId: 4242, clientId, request: ours })).buffer,
          (await kafkajsRequest({ correlationId: 4242, clientId, request: theirs })).buffer,
        ];
        assert.ok(a.equals(b), `${name}, client id ${String(clientId)}: ${a.length} bytes against ${b.length}`);
      }
    }
    // A produce body is written straight into the request's own buffer, never into one of its own.
    const body = (await installedProduce(produce).encode()) as Encoded & { written?: Buffer };
    const framed = (await installedRequest({ correlationId: 1, clientId: 'meguri', request: { apiKey: 0, apiVersion: 3, encode: () => body } })).buffer;
    assert.equal(framed.length, 4 + 2 + 2 + 4 + 2 + 'meguri'.length + body.size());
    assert.equal(body.written, undefined);
    assert.ok(framed.subarray(framed.length - body.size()).equals(body.buffer));
  });

  it('computes CRC-32C as kafkajs does, at any offset and length', () => {
    const data = randomBytes(5000);
    for (const [start, end] of [
      [0, 0],
      [0, 1],
      [3, 11],
      [1, 4096],
      [7, 5000],
    ] as const) {
      assert.equal(crc32c(data, start, end), kafkajsCrc32C(data.subarray(start, end)), `[${start}, ${end})`);
    }
    // The check value of CRC-32C (RFC 3720): "123456789".
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  });
});
