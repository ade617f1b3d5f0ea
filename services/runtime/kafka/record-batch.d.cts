export declare class MeasuredRecord {
  readonly size: number;
}
export declare function measureRecord(record: {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[]>;
}): MeasuredRecord;
export declare function crc32c(buf: Uint8Array, start?: number, end?: number): number;
interface EncoderLike {
  readonly buffer: Buffer;
  size(): number;
}
interface BatchPlan {
  readonly size: number;
  write(buf: Buffer, start: number): number;
}
export declare function createRecordBatch(deps: { Encoder: new (initialSize?: number) => unknown; longPath: string; compressionPath: string }): {
  RecordBatch(batch: Record<string, unknown>): Promise<EncoderLike>;
  planBatch(batch: Record<string, unknown>): Promise<BatchPlan>;
  MAGIC_BYTE: number;
};
export declare class DeferredPayload implements EncoderLike {
  readonly buffer: Buffer;
  size(): number;
  writeTo(buf: Buffer, start: number): number;
}
export declare function createProduceRequest(deps: {
  planBatch: (batch: Record<string, unknown>) => Promise<BatchPlan>;
}): (request: Record<string, unknown>) => { apiKey: number; apiVersion: number; apiName: string; expectResponse(): boolean; encode(): Promise<EncoderLike> };
export declare function createRequest(deps: {
  Encoder: new (initialSize?: number) => unknown;
}): (request: { correlationId: number; clientId: string | null; request: { apiKey: number; apiVersion: number; encode(): Promise<EncoderLike> | EncoderLike } }) => Promise<EncoderLike>;
